"""The "no secrets in forms" heuristic beyond English: a table of field names and titles
(:func:`~a2c_protocol._input.secret_fields` is pure: schema in, names out)."""

from __future__ import annotations

import pytest

from a2c_protocol._input import secret_fields

SECRET = [
    # other languages' password, PIN, key, credentials
    "kennwort", "Passwort", "mot_de_passe", "motDePasse", "contraseña", "ContraseñaUsuario",
    "senha", "wachtwoord", "lösenord", "hasło", "heslo", "salasana", "jelszó", "şifre",
    "parola", "пароль", "мой пароль", "请输入密码", "パスワード", "비밀번호", "geheimzahl",
    "pincode", "clave_secreta", "chiave privata", "credenciales", "zugangsdaten",
    # seed / recovery phrases, mnemonics, private keys
    "seed_phrase", "recoveryPhrase", "mnemonic", "wallet_mnemonic", "privateKey",
    "private-key", "signing key", "backup_codes", "助记词", "私钥",
    # payment
    "IBAN", "ibanCode", "account_number", "cardNumber", "numero_de_tarjeta", "cvv2", "CCV",
    "social_security_number", "ssn",
    # API keys and tokens, one-time codes
    "apiToken", "api-key", "access_token", "otp_code", "totp",
    # a long word found inside another
    "userpassword", "newpasswordagain",
]  # fmt: skip
PLAIN = [
    "name", "email", "max_tokens", "spinner", "keyboard", "secretary", "passport", "compass",
    "pinned", "opinion", "tokenizer", "description", "account_id", "code", "sort", "key",
    "city", "Kontostand", "number", "phrase", "card", "recovery",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET)
def test_a_secret_is_found_by_its_name_or_title(name: str) -> None:
    assert secret_fields({"properties": {name: {"type": "string"}}}) == [name]
    titled = {"properties": {"f": {"type": "string", "title": name}}}
    assert secret_fields(titled) == ["f"]


@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_field_is_not_a_secret(name: str) -> None:
    assert secret_fields({"properties": {name: {"type": "string", "title": name}}}) == []
