"""The deterministic extension → MIME table and the 0.2.3 text-MIME rule."""

import mimetypes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import DEFAULT_MIME_TYPE, MIME_TYPES, is_text_mime, mime_type_for

REQUIRED = {
    ".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
    ".json": "application/json", ".xml": "application/xml", ".yaml": "application/yaml",
    ".yml": "application/yaml", ".toml": "application/toml", ".rst": "text/x-rst",
}  # fmt: skip


def test_the_protocol_minimum_table_is_present() -> None:
    for ext, mime in REQUIRED.items():
        assert MIME_TYPES[ext] == mime
        assert mime_type_for(f"docs/file{ext}") == mime
        assert is_text_mime(mime)


def test_table_is_read_only_and_well_formed() -> None:
    with pytest.raises(TypeError):
        MIME_TYPES[".md"] = "x"  # type: ignore[index]
    for ext, mime in MIME_TYPES.items():
        assert ext.startswith(".") and ext == ext.lower() and ext.count(".") == 1
        assert mime == mime.lower() and mime.count("/") == 1 and ";" not in mime


@pytest.mark.parametrize(
    ("path", "mime"),
    [
        ("SKILL.md", "text/markdown"),
        ("assets/flow.PNG", "image/png"),
        ("scripts/triage.sh", "text/x-shellscript"),
        ("a/b/c.tar.gz", "application/gzip"),
        (".skillenv", DEFAULT_MIME_TYPE),  # a dotfile has no extension
        ("dir.md/README", DEFAULT_MIME_TYPE),  # only the last segment counts
        ("Makefile", DEFAULT_MIME_TYPE),
        ("x.unknownext", DEFAULT_MIME_TYPE),
        ("trailing.", DEFAULT_MIME_TYPE),
        ("", DEFAULT_MIME_TYPE),
    ],
)
def test_mime_type_for(path: str, mime: str) -> None:
    assert mime_type_for(path) == mime


def test_host_registry_is_never_consulted(monkeypatch: pytest.MonkeyPatch) -> None:
    # A host that maps .md to something else must not change our answer.
    monkeypatch.setattr(mimetypes, "guess_type", lambda *a, **k: ("application/x-evil", None))
    assert mime_type_for("SKILL.md") == "text/markdown"
    assert mime_type_for("x.weird") == DEFAULT_MIME_TYPE


segments = st.text(st.characters(blacklist_characters="/\x00"), max_size=12)
paths = st.lists(segments, min_size=1, max_size=4).map("/".join)


@given(paths)
def test_mime_is_total_and_in_the_table_or_default(path: str) -> None:
    mime = mime_type_for(path)
    assert mime in set(MIME_TYPES.values()) | {DEFAULT_MIME_TYPE}
    assert mime_type_for(path) == mime  # deterministic


@given(st.lists(segments, max_size=3), segments, st.sampled_from(sorted(MIME_TYPES)))
def test_extension_decides_case_insensitively(dirs: list[str], stem: str, ext: str) -> None:
    name = (stem.lstrip(".") or "f") + ext
    for variant in (name, name.upper(), name.swapcase()):
        assert mime_type_for("/".join([*dirs, variant])) == MIME_TYPES[ext]


def test_text_rule_examples() -> None:
    text = ["text/plain", "TEXT/HTML", "text/x-python; charset=utf-8", "application/json",
            "application/xml", "application/yaml", "application/toml", "application/javascript",
            "application/ld+json", "image/svg+xml", "application/vnd.api+yaml",
            "application/x-ipynb+json"]  # fmt: skip
    binary = ["application/octet-stream", "image/png", "application/pdf", "application/zip",
              "application/jsonl", "application/json-patch", "application/+json-ish",
              "text", "", "/", "text/", "/plain", "application/x-sh", "audio/wav"]  # fmt: skip
    assert [m for m in text if not is_text_mime(m)] == []
    assert [m for m in binary if is_text_mime(m)] == []


tokens = st.text("abcdefghijklmnopqrstuvwxyz0123456789.-", min_size=1, max_size=10)


@given(tokens)
def test_every_text_subtype_is_text(subtype: str) -> None:
    assert is_text_mime(f"text/{subtype}")


@given(tokens, tokens, st.sampled_from(["json", "xml", "yaml"]))
def test_structured_suffixes_are_text(top: str, base: str, suffix: str) -> None:
    assert is_text_mime(f"{top}/{base}+{suffix}")


@given(st.sampled_from(sorted(set(MIME_TYPES.values()))), tokens, st.booleans())
def test_parameters_and_case_do_not_matter(mime: str, param: str, upper: bool) -> None:
    variant = f"{mime.upper() if upper else mime} ; charset={param}"
    assert is_text_mime(variant) == is_text_mime(mime)


@given(tokens.filter(lambda t: t != "text"), tokens)
def test_other_types_are_binary_unless_listed(top: str, sub: str) -> None:
    mime = f"{top}/{sub}"
    listed = mime in {"application/json", "application/xml", "application/yaml",
                      "application/toml", "application/javascript"}  # fmt: skip
    assert is_text_mime(mime) == listed
