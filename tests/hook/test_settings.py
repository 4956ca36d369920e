"""settings.py: how each environment variable is parsed, validated and defaulted."""

import pytest

from aws_keepalive import diagnostics, settings


@pytest.fixture(autouse=True)
def _fresh_reports():
    diagnostics._reported.clear()


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on", " On "])
def test_switch_on_values(value, capsys):
    """1/true/yes/on in any case (and surrounding blanks) switch the layer on, silently."""
    assert settings.from_environ({"AWS_PYTHON_KEEPALIVE": value}) is not None
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("environ", [{}, {"AWS_PYTHON_KEEPALIVE": ""}] + [
    {"AWS_PYTHON_KEEPALIVE": value} for value in ("0", "false", "No", "OFF")])
def test_switch_off_values(environ, capsys):
    """Unset, empty, 0/false/no/off keep the layer off and print nothing."""
    assert settings.from_environ(environ) is None
    assert capsys.readouterr().err == ""


def test_switch_unknown_value_warns_and_stays_off(capsys):
    """Any other value: one warning naming the variable and the accepted values; layer off."""
    assert settings.from_environ({"AWS_PYTHON_KEEPALIVE": "enabled"}) is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert "AWS_PYTHON_KEEPALIVE='enabled'" in lines[0]
    assert "1/true/yes/on" in lines[0] and "0/false/no/off" in lines[0] and "stays off" in lines[0]


def test_defaults():
    """Only the switch set: 60 s / 10 s / 3 probes, botocore's pool size, 300 s max idle."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1"})
    assert (config.keepidle_s, config.keepintvl_s, config.keepcnt) == (60, 10, 3)
    assert config.pool_size is None
    assert config.max_idle_s == 300
    assert config.debug is False


def test_defaults_probe_inside_middlebox_timeout():
    """Both IDLE and INTERVAL defaults are below the 350 s NAT/NLB/VPC-endpoint idle timeout."""
    assert max(settings.KEEPIDLE_S, settings.KEEPINTVL_S) < 350
    assert settings.MAX_IDLE_S < 350


def test_overrides():
    """Valid values of every variable are taken as given."""
    config = settings.from_environ({
        "AWS_PYTHON_KEEPALIVE": "on",
        "AWS_PYTHON_KEEPALIVE_IDLE": "30",
        "AWS_PYTHON_KEEPALIVE_INTERVAL": " 5 ",
        "AWS_PYTHON_KEEPALIVE_COUNT": "127",
        "AWS_PYTHON_KEEPALIVE_POOL_SIZE": "64",
        "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "120",
        "AWS_PYTHON_KEEPALIVE_DEBUG": "true",
    })
    assert (config.keepidle_s, config.keepintvl_s, config.keepcnt) == (30, 5, 127)
    assert (config.pool_size, config.max_idle_s, config.debug) == (64, 120, True)


@pytest.mark.parametrize("name,value,default", [
    ("AWS_PYTHON_KEEPALIVE_IDLE", "-5", 60),
    ("AWS_PYTHON_KEEPALIVE_IDLE", "abc", 60),
    ("AWS_PYTHON_KEEPALIVE_IDLE", "0", 60),
    ("AWS_PYTHON_KEEPALIVE_IDLE", "32768", 60),
    ("AWS_PYTHON_KEEPALIVE_IDLE", "1.5", 60),
    ("AWS_PYTHON_KEEPALIVE_INTERVAL", "0", 10),
    ("AWS_PYTHON_KEEPALIVE_INTERVAL", "ten", 10),
    ("AWS_PYTHON_KEEPALIVE_COUNT", "0", 3),
    ("AWS_PYTHON_KEEPALIVE_COUNT", "128", 3),
    ("AWS_PYTHON_KEEPALIVE_POOL_SIZE", "0", None),
    ("AWS_PYTHON_KEEPALIVE_POOL_SIZE", "-1", None),
    ("AWS_PYTHON_KEEPALIVE_MAX_IDLE", "-5", 300),
    ("AWS_PYTHON_KEEPALIVE_MAX_IDLE", "5m", 300),
])
def test_invalid_number_warns_and_uses_default(name, value, default, capsys):
    """A bad number gets one warning naming the variable and its range; the default is used."""
    field = {
        "AWS_PYTHON_KEEPALIVE_IDLE": "keepidle_s",
        "AWS_PYTHON_KEEPALIVE_INTERVAL": "keepintvl_s",
        "AWS_PYTHON_KEEPALIVE_COUNT": "keepcnt",
        "AWS_PYTHON_KEEPALIVE_POOL_SIZE": "pool_size",
        "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "max_idle_s",
    }[name]
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", name: value})
    assert getattr(config, field) == default
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("aws-keepalive: WARN ")
    assert "%s=%r" % (name, value) in lines[0] and "is not an integer from" in lines[0]


def test_max_idle_zero_means_off(capsys):
    """AWS_PYTHON_KEEPALIVE_MAX_IDLE=0 is valid: replacement off, no warning."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "0"})
    assert config.max_idle_s == 0
    assert capsys.readouterr().err == ""


def test_invalid_debug_value_warns_and_stays_off(capsys):
    """AWS_PYTHON_KEEPALIVE_DEBUG with an unknown value warns and leaves debug off."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "verbose"})
    assert config.debug is False
    assert "AWS_PYTHON_KEEPALIVE_DEBUG='verbose'" in capsys.readouterr().err


# Parts with their own switch: trust.py and prepared.py (on with the layer), resume.py (opt-in).
OPT_OUTS = [("AWS_PYTHON_KEEPALIVE_TRUST_ONCE", "trust_once"), ("AWS_PYTHON_KEEPALIVE_PREPARED", "prepared"),
            ("AWS_PYTHON_KEEPALIVE_TLS_RESUME", "tls_resume")]


@pytest.mark.parametrize("variable,attribute", OPT_OUTS)
@pytest.mark.parametrize("value,expected", [(None, True), ("1", True), ("0", False), ("off", False)])
def test_opt_outs_on_by_default_and_switched_off(variable, attribute, value, expected):
    """Loading the CA bundle once and the build's prepared data are on with the layer;
    AWS_PYTHON_KEEPALIVE_TRUST_ONCE=0 / AWS_PYTHON_KEEPALIVE_PREPARED=0 turn each off."""
    environ = {"AWS_PYTHON_KEEPALIVE": "1"}
    if value is not None:
        environ[variable] = value
    elif attribute == "tls_resume":
        expected = settings.tls_resume_by_default()  # off where the session getter leaks
    assert getattr(settings.from_environ(environ), attribute) is expected


def test_session_getter_leaks_on_the_interpreters_of_gh_116810():
    """CPython 3.10-3.12.7 and 3.13.0 leak each SSLSocket.session read; 3.9, 3.12.8+, 3.13.1+,
    3.14 and other implementations do not."""
    leaks = settings.session_getter_leaks
    assert [leaks(v, "cpython") for v in ((3, 10, 0), (3, 11, 9), (3, 12, 1), (3, 12, 7), (3, 13, 0))] == [True] * 5
    assert [leaks(v, "cpython") for v in ((3, 9, 20), (3, 12, 8), (3, 13, 1), (3, 14, 3))] == [False] * 4
    assert leaks((3, 12, 1), "pypy") is False


@pytest.mark.parametrize("leaks", [True, False])
def test_tls_resume_is_opt_in_on_every_interpreter(monkeypatch, leaks):
    """Resumption is off unless the function sets AWS_PYTHON_KEEPALIVE_TLS_RESUME=1, whether or not
    the interpreter's SSLSocket.session leaks (the twin shows differences from stock it cannot
    remove: a PSK on the wire, a connect timeout behind a PSK-dropping middlebox); =1 always wins."""
    monkeypatch.setattr(settings, "session_getter_leaks", lambda version_info, implementation: leaks)
    assert settings.tls_resume_by_default() is False
    assert settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1"}).tls_resume is False
    explicit = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_TLS_RESUME": "1"}
    assert settings.from_environ(explicit).tls_resume is True


@pytest.mark.parametrize("variable,attribute", OPT_OUTS)
def test_invalid_opt_out_value_warns_and_stays_on(variable, attribute, capsys):
    """An opt-out variable with an unknown value warns, naming it, and keeps its default (on)."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", variable: "maybe"})
    default = settings.tls_resume_by_default() if attribute == "tls_resume" else True
    assert getattr(config, attribute) is default
    err = capsys.readouterr().err
    assert "%s='maybe'" % variable in err and "using %s" % ("on" if default else "off") in err


def test_other_variables_ignored_when_off(capsys):
    """With the switch off, the other variables are not read: no warning even for bad values."""
    assert settings.from_environ({"AWS_PYTHON_KEEPALIVE_IDLE": "abc",
                                  "AWS_PYTHON_KEEPALIVE_DEBUG": "verbose"}) is None
    assert capsys.readouterr().err == ""


def test_describe_names_every_setting():
    """The debug description names each effective setting."""
    text = settings.Settings().describe()
    assert text == ("keepidle_s=60 keepintvl_s=10 keepcnt=3 pool_size=botocore default "
                    "max_idle_s=300 learn=on")
    text = settings.Settings(learn=False, metrics=True, metrics_namespace="ns").describe()
    assert text.endswith("max_idle_s=300 learn=off metrics=ns")
    assert settings.Settings(prepared=False).describe().endswith("learn=on prepared=off")
    assert settings.Settings(tls_resume=False).describe().endswith("learn=on tls_resume=off")


@pytest.mark.parametrize("value,expected", [("", True), ("1", True), ("0", False), ("off", False)])
def test_learn_on_by_default_and_switched_off(value, expected):
    """AWS_PYTHON_KEEPALIVE_LEARN: on unless set to an off value."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_LEARN": value})
    assert config.learn is expected


def test_metrics_off_by_default_and_namespace_default():
    """AWS_PYTHON_KEEPALIVE_METRICS is off unless set; the namespace is aws-python-keepalive."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1"})
    assert (config.metrics, config.metrics_namespace) == (False, "aws-python-keepalive")
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_METRICS": "1",
                                    "AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE": " Team/keepalive "})
    assert (config.metrics, config.metrics_namespace) == (True, "Team/keepalive")


@pytest.mark.parametrize("value", ["AWS/Lambda", "bad{name}", "x" * 256])
def test_invalid_namespace_warns_and_uses_default(value, capsys):
    """A namespace CloudWatch would refuse gets one warning naming it, and the default."""
    config = settings.from_environ({"AWS_PYTHON_KEEPALIVE": "1",
                                    "AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE": value})
    assert config.metrics_namespace == "aws-python-keepalive"
    err = capsys.readouterr().err
    assert "AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE=%r" % value in err and err.count("\n") == 1
