"""Where sign-ins live: one record per MCP server *and* resource (RFC 8707).

Rules:

* a record holds the tokens, the registered client and when the access token expires; it is
  keyed by the server's name and its canonical resource URL, so a token is only ever
  presented to the server (and URL) it was issued for: a renamed server or a changed URL
  needs a new sign-in;
* the OS keyring (``keyring``, the ``a2c-computer[keyring]`` extra) is used where a real
  backend is available; else one JSON file, mode 0600, under the Computer's state directory
  (``$A2C_COMPUTER_STATE_DIR``, else ``$XDG_STATE_HOME/a2c-computer``, else
  ``~/.local/state/a2c-computer``), with one warning per process;
* nothing here logs a token.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, Protocol

from a2c_computer._exceptions import TokenStoreError

__all__ = ["FileTokenStore", "KeyringTokenStore", "TokenStore", "default_store", "state_dir"]

logger = logging.getLogger("a2c_computer.oauth")

_FILE_NAME: Final = "oauth-tokens.json"
_KEYRING_SERVICE: Final = "a2c-computer"
_warned = False


def state_dir() -> Path:
    """The Computer's state directory (not created here)."""
    explicit = os.environ.get("A2C_COMPUTER_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or os.path.join("~", ".local", "state")
    return Path(base).expanduser() / "a2c-computer"


class TokenStore(Protocol):
    """Records keyed by (server name, resource URL); a record is a plain JSON object."""

    where: str

    def get(self, server: str, resource: str) -> dict[str, Any] | None: ...
    def put(self, server: str, resource: str, record: dict[str, Any]) -> None: ...
    def delete(self, server: str) -> int: ...
    def entries(self) -> dict[str, dict[str, dict[str, Any]]]: ...


class FileTokenStore:
    """All records in one JSON file only its owner can read (0600), replaced atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("OAuth token file %s is unreadable (%s)", self.path, type(exc).__name__)
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".oauth-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out)
            os.replace(tmp, self.path)
        except BaseException:
            with _suppress():
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """This thread and every other process (``auth login`` next to a running Computer)."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(
                self.path.with_name(self.path.name + ".lock"), os.O_CREAT | os.O_RDWR, 0o600
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def get(self, server: str, resource: str) -> dict[str, Any] | None:
        with self._lock:
            return self._load().get(server, {}).get(resource)

    def put(self, server: str, resource: str, record: dict[str, Any]) -> None:
        with self._exclusive():
            data = self._load()
            data.setdefault(server, {})[resource] = record
            self._save(data)

    def delete(self, server: str) -> int:
        with self._exclusive():
            data = self._load()
            gone = data.pop(server, None)
            if gone is not None:
                self._save(data)
            return len(gone or {})

    def entries(self) -> dict[str, dict[str, dict[str, Any]]]:
        with self._lock:
            return self._load()


class KeyringTokenStore:
    """Records in the OS keyring; an index of (server, resource) keys in the same keyring.

    A backend that fails (a locked or unreachable keyring) raises :class:`TokenStoreError`
    naming the backend and the cause, never the backend's own exception: switching to the
    file then would split sign-ins between two stores."""

    def __init__(self, backend: Any) -> None:
        self._keyring = backend
        # keyring's display name ("SecretService Keyring"); every backend class is "Keyring".
        self.name = str(getattr(backend, "name", "") or type(backend).__name__)
        self.where = f"the OS keyring ({self.name})"
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _backend(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            # The text of keyring's errors names no secret ("Failed to unlock the collection!").
            raise TokenStoreError(
                f"the OS keyring ({self.name}) failed: {type(exc).__name__}: {exc}; unlock "
                "it, or set A2C_COMPUTER_TOKEN_STORE=file to keep OAuth tokens in a 0600 "
                f"file under {state_dir()}"
            ) from exc

    def _read(self, user: str) -> str | None:
        with self._backend():
            raw = self._keyring.get_password(_KEYRING_SERVICE, user)
        return raw if isinstance(raw, str) else None

    def _write(self, user: str, value: str) -> None:
        with self._backend():
            self._keyring.set_password(_KEYRING_SERVICE, user, value)

    def _index(self) -> dict[str, list[str]]:
        raw = self._read("index")
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def get(self, server: str, resource: str) -> dict[str, Any] | None:
        raw = self._read(f"{server}\n{resource}")
        try:
            record = json.loads(raw) if raw else None
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def put(self, server: str, resource: str, record: dict[str, Any]) -> None:
        with self._lock:
            self._write(f"{server}\n{resource}", json.dumps(record))
            index = self._index()
            if resource not in index.setdefault(server, []):
                index[server].append(resource)
                self._write("index", json.dumps(index))

    def delete(self, server: str) -> int:
        with self._lock:
            index = self._index()
            resources = index.pop(server, [])
            for resource in resources:
                self._forget(f"{server}\n{resource}")
            self._write("index", json.dumps(index))
            return len(resources)

    def _forget(self, user: str) -> None:
        try:
            import keyring.errors  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # a backend handed in by a caller without keyring installed
            missing: tuple[type[BaseException], ...] = (KeyError,)
        else:
            missing = (keyring.errors.PasswordDeleteError, KeyError)
        with self._backend():
            try:
                self._keyring.delete_password(_KEYRING_SERVICE, user)
            except missing:
                pass  # already gone is fine; a keyring that cannot delete is not

    def entries(self) -> dict[str, dict[str, dict[str, Any]]]:
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for server, resources in self._index().items():
            for resource in resources:
                record = self.get(server, resource)
                if record is not None:
                    out.setdefault(server, {})[resource] = record
        return out


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def _usable_keyring() -> Any | None:
    if os.environ.get("A2C_COMPUTER_TOKEN_STORE") == "file":
        return None
    try:
        import keyring  # type: ignore[import-not-found,unused-ignore]
        from keyring.backends import fail  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return backend


def default_store() -> TokenStore:
    """The keyring where one works (and ``A2C_COMPUTER_TOKEN_STORE`` is not ``file``), else
    the 0600 file under :func:`state_dir` (warned about once per process)."""
    global _warned
    backend = _usable_keyring()
    if backend is not None:
        return KeyringTokenStore(backend)
    store = FileTokenStore(state_dir() / _FILE_NAME)
    if not _warned:
        _warned = True
        logger.warning(
            "OAuth tokens are kept in %s (mode 0600): no OS keyring is available "
            "(install a2c-computer[keyring] for one)",
            store.path,
        )
    return store


def expires_at(expires_in: Any, *, early: float = 0.0) -> float | None:
    """When to treat a token that lives ``expires_in`` seconds from now as ended: ``early``
    seconds before its end, but never before a tenth of its life has passed."""
    try:
        life = int(expires_in)
    except (TypeError, ValueError):
        return None
    return time.time() + max(life - early, life * 0.9)
