"""Form-mode elicitation: the fields of a requested schema, the secret rule, answer checks.

MCP restricts a form's ``requestedSchema`` to a flat object of primitive properties:
strings (``format`` email, uri, date, date-time; ``minLength``/``maxLength``), numbers and
integers (``minimum``/``maximum``), booleans, single-select enums (``enum``, or ``oneOf`` of
``{const, title}``) and multi-select enums (an array whose ``items`` carry ``enum`` or
``anyOf`` of ``{const, title}``; ``minItems``/``maxItems``). Rules here:

* :func:`form_fields` lists the fields a prompt asks for, in schema order; anything outside
  the subset raises ``ValueError`` naming the property;
* :func:`secret_fields` names the properties that ask for a secret. MCP forbids servers to
  ask for passwords, API keys, access tokens or payment credentials in form mode, so such a
  form is refused before it reaches a user. It is a keyword heuristic, not a guarantee: a
  property is a secret when it says ``format: "password"`` or ``writeOnly: true``, or its
  name or title (split at ``_``, ``-``, blanks and camelCase, case-folded) has one of the
  words or phrases of ``_SECRET_WORDS`` / ``_SECRET_PHRASES`` (password, PIN, passcode,
  secret, token, credential, API key, private key, seed or recovery phrase, mnemonic,
  IBAN, account number, card number, CVV, OTP, social security number; and the usual
  words for password, PIN, key and credentials in German, French, Spanish, Portuguese,
  Italian, Dutch, the Nordic languages, Polish, Czech, Finnish, Hungarian, Turkish and
  Russian), or contains one of ``_SECRET_INFIXES`` anywhere (the distinctive long words
  such as *password* in ``userpassword``, and the Chinese, Japanese and Korean words for
  password, PIN, private key and mnemonic). A server that names its field ``x`` and
  describes it only in prose passes;
* :func:`content_problems` checks an accepted form's ``content`` against the schema (the
  types, required fields, enum values, bounds): one message per problem, none when valid;
* :func:`parse_field` turns what a user typed into the field's JSON value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs

from a2c_protocol._models._fields import JsonObject

__all__ = ["FormField", "content_problems", "form_fields", "parse_field", "secret_fields"]

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "enum", "multi"]

_SECRET_WORDS: Final = frozenset(
    {
        # English
        "password", "passwords", "passwd", "pwd", "passphrase", "passcode", "secret",
        "secrets", "token", "apikey", "credential", "credentials", "cvv", "cvc", "ccv",
        "pin", "mnemonic", "seedphrase", "privatekey", "privkey", "iban", "otp", "totp",
        "ssn",
        # German, French, Spanish, Portuguese, Italian
        "kennwort", "passwort", "geheimzahl", "zugangsdaten", "kartennummer", "motdepasse",
        "mdp", "jeton", "identifiants", "cryptogramme", "contraseña", "contrasena",
        "credenciales", "senha", "credenciais", "credenziali",
        # Dutch, Nordic, Polish, Czech, Finnish, Hungarian, Turkish, Russian
        "wachtwoord", "pincode", "lösenord", "losenord", "passord", "adgangskode",
        "kodeord", "hasło", "haslo", "heslo", "salasana", "jelszó", "jelszo", "şifre",
        "sifre", "parola", "пароль", "токен", "пин",
    }
)  # fmt: skip
_SECRET_PHRASES: Final = frozenset(
    {
        ("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
        ("signing", "key"), ("card", "number"), ("credit", "card"), ("debit", "card"),
        ("security", "code"), ("access", "token"), ("auth", "code"),
        ("seed", "phrase"), ("seed", "words"), ("recovery", "phrase"), ("recovery", "words"),
        ("recovery", "code"), ("recovery", "codes"), ("backup", "code"), ("backup", "codes"),
        ("secret", "phrase"), ("account", "number"), ("routing", "number"),
        ("sort", "code"), ("social", "security", "number"),
        ("mot", "de", "passe"), ("clave", "secreta"), ("clave", "privada"),
        ("chave", "privada"), ("chiave", "privata"), ("clé", "privée"), ("cle", "privee"),
        ("número", "de", "tarjeta"), ("numero", "de", "tarjeta"),
        ("numéro", "de", "carte"), ("numero", "de", "carte"),
    }
)  # fmt: skip
#: Found anywhere in a case-folded name or title: words distinctive enough to find inside
#: another (``userpassword``), and scripts written without blanks.
_SECRET_INFIXES: Final = (
    "password", "passwort", "kennwort", "passphrase", "contraseña", "wachtwoord",
    "lösenord", "salasana", "motdepasse", "mnemonic", "seedphrase", "privatekey",
    "密码", "密碼", "口令", "私钥", "私鑰", "助记词", "助記詞", "パスワード", "暗証番号",
    "秘密鍵", "비밀번호", "암호",
)  # fmt: skip
_LONGEST_PHRASE: Final = max(len(p) for p in _SECRET_PHRASES)
_RUNS: Final = re.compile(r"[^\W_]+")
_WORDS: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@attrs.frozen(kw_only=True)
class FormField:
    """One property of a form: what a prompt shows and what the answer must be."""

    name: str
    kind: FieldKind
    title: str | None = None
    description: str | None = None
    required: bool = False
    default: Any = None
    #: (value, label) of an enum's choices, in order; empty for other kinds.
    options: tuple[tuple[str, str], ...] = ()
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def label(self) -> str:
        return self.title or self.name


def _choices(items: object) -> tuple[tuple[str, str], ...] | None:
    if not isinstance(items, list) or not items:
        return None
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("const"), str):
            title = item.get("title")
            out.append((item["const"], title if isinstance(title, str) else item["const"]))
        else:
            return None
    return tuple(out)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _field(name: str, prop: object, required: bool) -> FormField:
    if not isinstance(prop, dict):
        raise ValueError(f"property {name!r} is not a schema object")
    kind = prop.get("type")
    common: dict[str, Any] = {
        "name": name,
        "title": _text(prop.get("title")),
        "description": _text(prop.get("description")),
        "required": required,
        "default": prop.get("default"),
    }
    if kind == "string":
        enum = prop.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            names = prop.get("enumNames")
            labels = names if isinstance(names, list) and len(names) == len(enum) else enum
            pairs = tuple(zip(enum, map(str, labels), strict=True))
            return FormField(kind="enum", options=pairs, **common)
        one_of = _choices(prop.get("oneOf"))
        if one_of is not None:
            return FormField(kind="enum", options=one_of, **common)
        return FormField(
            kind="string", format=_text(prop.get("format")),
            min_length=_count(prop.get("minLength")), max_length=_count(prop.get("maxLength")),
            **common,
        )  # fmt: skip
    if kind in ("number", "integer"):
        return FormField(
            kind=kind, minimum=_number(prop.get("minimum")), maximum=_number(prop.get("maximum")),
            **common,
        )  # fmt: skip
    if kind == "boolean":
        return FormField(kind="boolean", **common)
    if kind == "array":
        items = prop.get("items")
        options: tuple[tuple[str, str], ...] | None = None
        if isinstance(items, dict):
            enum = items.get("enum")
            if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
                options = tuple((v, v) for v in enum)
            else:
                options = _choices(items.get("anyOf"))
        if options is None:
            raise ValueError(f"property {name!r}: only arrays of enum strings are allowed")
        return FormField(
            kind="multi", options=options, min_items=_count(prop.get("minItems")),
            max_items=_count(prop.get("maxItems")), **common,
        )  # fmt: skip
    raise ValueError(f"property {name!r}: type {kind!r} is not allowed in a form")


def form_fields(schema: JsonObject) -> tuple[FormField, ...]:
    """The fields of a form's ``requestedSchema``; ValueError outside MCP's subset."""
    if schema.get("type", "object") != "object":
        raise ValueError("a form's schema must be an object")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise ValueError("a form's properties must be an object")
    required = schema.get("required", [])
    needed = set(required) if isinstance(required, list) else set()
    return tuple(_field(str(name), prop, name in needed) for name, prop in props.items())


def _cut(run: str) -> list[str]:
    """A run of letters and digits cut at camelCase and digits (any script)."""
    if run.isascii():
        return _WORDS.findall(run)
    words, start = [], 0
    for i in range(1, len(run)):
        before, here = run[i - 1], run[i]
        if (before.islower() and here.isupper()) or (before.isdigit() != here.isdigit()):
            words.append(run[start:i])
            start = i
    words.append(run[start:])
    return words


def _words(text: str) -> list[str]:
    return [w.casefold() for run in _RUNS.findall(text) for w in _cut(run)]


def _secret_text(text: str) -> bool:
    words = _words(text)
    if _SECRET_WORDS.intersection(words):
        return True
    for size in range(2, _LONGEST_PHRASE + 1):
        if any(tuple(words[i : i + size]) in _SECRET_PHRASES for i in range(len(words))):
            return True
    folded = text.casefold()
    return any(infix in folded for infix in _SECRET_INFIXES)


def secret_fields(schema: object) -> list[str]:
    """The properties of a form that ask for a secret (see the module rules: a keyword
    heuristic that refuses the common spellings, not a guarantee)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    found: list[str] = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        title = prop.get("title")
        if (
            _secret_text(str(name))
            or (isinstance(title, str) and _secret_text(title))
            or prop.get("format") == "password"
            or prop.get("writeOnly") is True
        ):
            found.append(str(name))
    return found


def _value_problem(field: FormField, value: object) -> str | None:
    kind = field.kind
    if kind == "boolean":
        return None if isinstance(value, bool) else "expected true or false"
    if kind in ("number", "integer"):
        number = _number(value)
        if number is None or (kind == "integer" and not isinstance(value, int)):
            return f"expected {'an integer' if kind == 'integer' else 'a number'}"
        if field.minimum is not None and number < field.minimum:
            return f"must be at least {field.minimum:g}"
        if field.maximum is not None and number > field.maximum:
            return f"must be at most {field.maximum:g}"
        return None
    if kind == "enum":
        allowed = [v for v, _ in field.options]
        return None if value in allowed else f"must be one of {allowed}"
    if kind == "multi":
        allowed = [v for v, _ in field.options]
        if not isinstance(value, list) or not all(v in allowed for v in value):
            return f"expected a list of {allowed}"
        if field.min_items is not None and len(value) < field.min_items:
            return f"choose at least {field.min_items}"
        if field.max_items is not None and len(value) > field.max_items:
            return f"choose at most {field.max_items}"
        return None
    if not isinstance(value, str):
        return "expected a string"
    if field.min_length is not None and len(value) < field.min_length:
        return f"must be at least {field.min_length} characters"
    if field.max_length is not None and len(value) > field.max_length:
        return f"must be at most {field.max_length} characters"
    return None


def content_problems(schema: JsonObject, content: object) -> list[str]:
    """What is wrong with an accepted form's ``content`` (empty when it fits the schema)."""
    try:
        fields = form_fields(schema)
    except ValueError as exc:
        return [str(exc)]
    if not isinstance(content, dict):
        return ["content must be an object"]
    problems: list[str] = []
    for field in fields:
        if field.name not in content:
            if field.required:
                problems.append(f"{field.name}: required")
            continue
        problem = _value_problem(field, content[field.name])
        if problem is not None:
            problems.append(f"{field.name}: {problem}")
    known = {f.name for f in fields}
    problems.extend(f"{name}: not in the form" for name in content if name not in known)
    return problems


def _split(text: str) -> Sequence[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_field(field: FormField, text: str) -> Any:
    """The JSON value for what a user typed into ``field``; ValueError with a hint.

    Booleans take y/yes/true/1 and n/no/false/0; an enum its value, its label or its
    1-based number in the list; a multi-select a comma-separated list of those.
    """
    text = text.strip()
    if field.kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "1"):
            return True
        if lowered in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if field.kind in ("number", "integer"):
        try:
            value: Any = int(text) if field.kind == "integer" else float(text)
        except ValueError:
            kind = "an integer" if field.kind == "integer" else "a number"
            raise ValueError(f"expected {kind}") from None
        if field.kind == "number" and value.is_integer() and "." not in text:
            value = int(value)
    elif field.kind in ("enum", "multi"):
        chosen = [
            _choice(field, part) for part in (_split(text) if field.kind == "multi" else [text])
        ]
        value = chosen if field.kind == "multi" else chosen[0]
    else:
        value = text
    problem = _value_problem(field, value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _choice(field: FormField, text: str) -> str:
    for number, (value, label) in enumerate(field.options, start=1):
        if text in (value, label) or text == str(number):
            return value
    lowered = text.lower()
    for value, label in field.options:
        if lowered in (value.lower(), label.lower()):
            return value
    raise ValueError(f"choose one of {[label for _, label in field.options]}")
