import a2c_computer


def test_public_surface_is_pinned() -> None:
    assert sorted(a2c_computer.__all__) == [
        "ArchiveLimits",
        "BlobChunk",
        "BlobError",
        "BlobInfo",
        "BlobResolver",
        "BlobSettings",
        "BlobSource",
        "BlobStore",
        "BlobTooLargeError",
        "BlobUnavailableError",
        "CallRecord",
        "Computer",
        "ComputerError",
        "ComputerMetrics",
        "ComputerStateError",
        "ConfigError",
        "ConfigReloader",
        "ConfirmCallback",
        "ConfirmRequest",
        "InputResolutionError",
        "InputResolver",
        "LandingSettings",
        "LinkError",
        "LintFinding",
        "ReloadPlan",
        "ServerRefusedError",
        "ServerState",
        "ServerStatus",
        "SkillManager",
        "SkillSettings",
        "SpoolUsage",
        "WindowInfo",
        "__version__",
        "build_registry",
        "classify_upstream_failure",
        "default_skill_settings",
        "describe_window",
        "env_var_names",
        "lint_windows",
        "load_config",
        "merge_tool_meta",
        "organize",
        "plan_reload",
        "redacting_filter",
        "render_window",
        "sanitize_auth_hint",
    ]
    for name in a2c_computer.__all__:
        assert getattr(a2c_computer, name) is not None


def test_errors_share_one_root() -> None:
    from a2c_protocol import A2CError

    for cls in (
        a2c_computer.ConfigError,
        a2c_computer.InputResolutionError,
        a2c_computer.LinkError,
        a2c_computer.ServerRefusedError,
    ):
        assert issubclass(cls, a2c_computer.ComputerError)
    assert issubclass(a2c_computer.ComputerError, A2CError)
