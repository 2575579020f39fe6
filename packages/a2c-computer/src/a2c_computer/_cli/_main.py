"""The ``a2c-computer`` command: ``run`` (serve an office) and ``check`` (lint MCP servers).

::

    a2c-computer run --config computer.json --server http://127.0.0.1:8000 \\
        --office office-1 --name box-1 [--token T]
    a2c-computer check --config computer.json
    a2c-computer skills --config computer.json [--skills-dir DIR]
    a2c-computer config convert mcp.json [-o computer.json] [--overwrite]
    a2c-computer auth login SERVER --config computer.json   (also: auth status, auth logout)
    a2c-computer landed list --landing-dir DIR   (also: landed clean --older-than 7d)

Options of ``run`` may come from the environment: ``A2C_COMPUTER_CONFIG``,
``A2C_SERVER_URL``, ``A2C_OFFICE_ID``, ``A2C_COMPUTER_NAME``, ``A2C_TOKEN``. The token is
sent as ``auth.token``. Logs go to stderr; Ctrl-C or SIGTERM shut down cleanly (every MCP
child process is stopped).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from a2c_computer._config import load_config
from a2c_computer._exceptions import ComputerError, ConfigError, LinkError
from a2c_computer._landing import landing_settings, run_landed
from a2c_computer._observe._logging import configure_logging, register_secret
from a2c_computer._toolcalls._confirm import ALLOW_HINT, foreground_terminal
from a2c_protocol import ProtocolVersionError, token_file_auth, token_flags_problem

from ._args import build_parser, parse_command_line
from ._convert_cmd import convert_hint, is_mcp_servers_file, run_convert
from ._env import LANDING_ENV, SKILL_OPTIONS, apply_env, blob_settings, skill_settings

# Each command imports what only it needs when it runs (the Computer and python-socketio for
# ``run``, the MCP client for ``check`` and ``skills``, OAuth for ``auth``): ``--help``, a
# usage error or ``config convert`` answer without loading them.
if TYPE_CHECKING:
    from a2c_computer._app import Computer
    from a2c_computer._toolcalls._confirm import ConsoleConfirmer

__all__ = ["main"]

logger = logging.getLogger("a2c_computer.cli")

EXIT_OK = 0
#: ``check`` found problems; ``run`` could not reach the Server or was refused by it.
EXIT_FAILURE = 1
#: A usage mistake: a bad flag or environment value, an invalid configuration.
EXIT_USAGE = 2
#: The Server refused the protocol version (4008).
EXIT_VERSION = 3


def _confirmer(mode: str, interactive: bool) -> ConsoleConfirmer | None:
    if mode != "ask":
        return None
    from a2c_computer._toolcalls._confirm import ConsoleConfirmer

    if not interactive:
        # Fail closed: nobody can say yes, so nothing unconfirmed runs (systemd, nohup,
        # docker). A read from the background would stop the process (SIGTTIN) anyway.
        logger.warning(
            "--confirm ask: stdin is not the foreground terminal%s; tools without "
            "auto_apply: true are refused (4005): %s",
            " (running in the background?)" if sys.stdin.isatty() else "",
            ALLOW_HINT,
        )
    # Asked again at each call: a job brought to the foreground can answer then.
    return ConsoleConfirmer(can_ask=lambda: foreground_terminal(sys.stdin))


async def _drain_unless_signalled_again(
    computer: Computer, grace: float, stop: asyncio.Event
) -> None:
    from a2c_computer._shutdown import drain

    stop.clear()
    draining = asyncio.ensure_future(drain(computer, grace))
    again = asyncio.ensure_future(stop.wait())
    await asyncio.wait({draining, again}, return_when=asyncio.FIRST_COMPLETED)
    for task in (draining, again):
        task.cancel()
    await asyncio.gather(draining, again, return_exceptions=True)


def _token_file_hook(path: str) -> Callable[[], dict[str, str]]:
    read = token_file_auth(path)

    def fields() -> dict[str, str]:
        got = read()
        register_secret(got["token"])  # each new token is kept out of the logs too
        return got

    return fields


async def _run(args: argparse.Namespace) -> int:
    from a2c_computer._app import Computer
    from a2c_computer._observe._metrics import serve_metrics
    from a2c_computer._reloader import ConfigReloader

    auth: dict[str, Any] = {"token": args.token} if args.token else {}
    register_secret(args.token)
    auth_hook = _token_file_hook(args.token_file) if args.token_file else None
    interactive = foreground_terminal(sys.stdin)
    confirm = _confirmer(args.confirm, interactive)
    policy: Literal["allow", "deny"] = "deny" if args.confirm == "deny" else "allow"
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    computer = Computer(
        load_config(args.config),
        name=args.name,
        server_url=args.server,
        office_id=args.office,
        auth=auth,
        auth_hook=auth_hook,
        socketio_path=args.socketio_path,
        confirm=confirm,
        confirm_policy=policy,
        interactive=interactive,
        wait_for_server=args.wait_server,
        blobs=blob_settings(args),
        skills=skill_settings(args, args.name),
        allow_agents=args.allow_agent or None,
        landing=landing_settings(args),
        protocol=args.protocol,
        input_timeout=args.input_timeout,
        max_input_requests_per_round=args.max_input_requests_per_round,
        max_input_requests_per_call=args.max_input_requests_per_call,
    )
    if not args.allow_agent:
        logger.warning(
            "no --allow-agent: any Agent in office %s may call this Computer's tools", args.office
        )
    stop_metrics = None
    if args.metrics_port is not None:
        stop_metrics = serve_metrics(computer.metrics, args.metrics_host, args.metrics_port)[1]
    if not await _start_unless_stopped(computer, stop):
        logger.info("stopped before the Server was reached")
        if stop_metrics is not None:
            await asyncio.to_thread(stop_metrics)
        return 0
    async with contextlib.AsyncExitStack() as started:
        started.push_async_exit(computer)
        for state in computer.server_states().values():
            logger.info(
                "MCP server %s: %s%s",
                state.name,
                state.status,
                f" ({state.last_error})" if state.last_error else "",
            )
        reloader = ConfigReloader(
            computer, args.config, on_outcome=lambda o: computer.metrics.reloads.labels(o).inc()
        )
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGHUP, reloader.request)
        serving = asyncio.ensure_future(computer.serve_forever())
        stopping = asyncio.ensure_future(stop.wait())
        watching = asyncio.ensure_future(reloader.watch() if args.watch_config else stop.wait())
        done, _ = await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for task in (serving, stopping, watching):
            task.cancel()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGHUP)
        await reloader.aclose()
        if serving in done and not serving.cancelled() and serving.exception() is not None:
            raise serving.exception()  # type: ignore[misc]
        await _drain_unless_signalled_again(computer, args.shutdown_grace, stop)
    if stop_metrics is not None:
        await asyncio.to_thread(stop_metrics)
    logger.info("stopped")
    return 0


async def _start_unless_stopped(computer: Computer, stop: asyncio.Event) -> bool:
    """Start ``computer`` (MCP servers, then the Server, waited for up to ``--wait-server``);
    False when SIGINT/SIGTERM came first.

    The start can take minutes while the Server is not up yet; a supervisor's stop must not
    wait for it. The cancelled start tears down what it had started (MCP servers, spool).
    """
    starting = asyncio.ensure_future(computer.__aenter__())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if starting.done():
        starting.result()  # a failed start raises here, as ``async with`` would
        return True
    starting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    return False


async def _check(args: argparse.Namespace) -> int:
    from ._check_cmd import run_check

    return await run_check(
        load_config(args.config),
        timeout=args.timeout,
        interactive=foreground_terminal(sys.stdin),
        convert_hint=convert_hint(args.config) if is_mcp_servers_file(args.config) else None,
        landing=landing_settings(args),
    )


async def _skills(args: argparse.Namespace) -> int:
    from ._skills_cmd import run_skills

    return await run_skills(
        load_config(args.config),
        skill_settings(args, "a2c-computer-skills"),
        timeout=args.timeout,
        interactive=foreground_terminal(sys.stdin),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``a2c-computer``; returns the exit status (``--help`` lists them)."""
    parser = build_parser()
    args = parse_command_line(parser, argv)
    if not os.environ.get("A2C_LOG_FORMAT", "text").strip():  # the rule of apply_env
        parser.error("A2C_LOG_FORMAT is set but empty: unset it or give a value")
    if args.command == "config":
        return run_convert(args.file, args.output, overwrite=args.overwrite)
    if args.command == "run":
        apply_env(parser, args)
        missing = [f for f in ("config", "server", "office", "name") if not getattr(args, f)]
        if missing:
            parser.error(
                "run needs "
                + ", ".join(f"--{f}" for f in missing)
                + " (or their environment variables, see --help)"
            )
        token_problem = token_flags_problem(args.token, args.token_file)
        if token_problem is not None:
            # Not a syntax slip: the whole usage block would only bury the one line.
            parser.exit(2, f"{parser.prog}: error: {token_problem}\n")
    if args.command == "skills":
        apply_env(parser, args, options=SKILL_OPTIONS)
    if args.command == "check":
        apply_env(parser, args, options=LANDING_ENV)
    if args.command == "landed":
        apply_env(parser, args, options=LANDING_ENV[:1])  # A2C_LANDING_DIR
    level = (
        logging.WARNING - 10 * min(args.verbose, 2)
        if args.command in ("check", "skills")
        else (logging.INFO if args.verbose == 0 else logging.DEBUG)
    )
    configure_logging(level, verbose=args.verbose > 0, fmt=args.log_format)
    if args.command in ("check", "skills") and args.verbose == 0:
        # The report prints every refusal; the ERROR log lines would only repeat them.
        logging.getLogger("a2c_computer.skills").setLevel(logging.CRITICAL)
    try:
        if args.command == "auth":
            from a2c_computer._oauth._cmd import run_auth

            return run_auth(args)
        if args.command == "landed":
            return run_landed(args)
        if getattr(args, "config", None):  # sign-in hints name the real file, not a placeholder
            from a2c_computer._oauth._provider import CONFIG_PATH

            CONFIG_PATH.set(str(Path(args.config).resolve()))
        if args.command == "run":
            from a2c_computer._observe import _otel as otel

            otel.configure_from_env()
            try:
                return asyncio.run(_run(args))
            finally:
                otel.shutdown()
        if args.command == "skills":
            return asyncio.run(_skills(args))
        return asyncio.run(_check(args))
    except ProtocolVersionError as exc:
        print(f"a2c-computer: {exc}", file=sys.stderr)
        return EXIT_VERSION
    except LinkError as exc:
        print(f"a2c-computer: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except ComputerError as exc:
        print(f"a2c-computer: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``check | head``): not an error worth a traceback.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
