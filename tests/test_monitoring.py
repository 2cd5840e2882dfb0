"""The shipped Grafana dashboard and Prometheus alerting rules (monitoring/): promtool accepts the
rules and passes their unit tests, every dashboard query is valid PromQL, and every metric either
names is one a real daemon exposes."""

import json
import re
import subprocess
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families

from .daemon.conftest import Daemon

MONITORING = Path(__file__).resolve().parents[1] / "monitoring"
RULES = MONITORING / "distractd-rules.yml"
RULE_TESTS = MONITORING / "distractd-rules.test.yml"
DASHBOARD = MONITORING / "distractd-dashboard.json"

PROMETHEUS_SERIES = {"up"}
"""Series Prometheus itself adds to every target."""
_GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$instance": ".*", "$job": ".*"}
_PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
                 "unless", "bool", "offset", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression selects: identifiers outside strings, label
    matchers, ranges and grouping clauses that are neither functions nor keywords."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for match in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", expr):
        if not expr[match.end():].lstrip().startswith("(") \
                and match.group().lower() not in _PROMQL_WORDS:
            names.add(match.group())
    return names


def _rule_expressions():
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def _dashboard_expressions():
    """``(panel title, PromQL)`` of every panel target, Grafana's variables given values."""
    dashboard = json.loads(DASHBOARD.read_text())
    found = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", ()):
            expr = target["expr"]
            for variable, value in _GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            found.append((panel["title"], expr))
    return found


def _variable_metrics():
    """Metric names of the dashboard's ``label_values(metric, label)`` variables."""
    dashboard = json.loads(DASHBOARD.read_text())
    return {re.match(r"label_values\((\w+)", variable["definition"])[1]
            for variable in dashboard["templating"]["list"] if variable["type"] == "query"}


def test_metric_names_reads_selectors_only():
    assert metric_names('sum by (reason) (rate(a_total{reason!="x"}[5m])) / on (i) b > 1e-9') \
        == {"a_total", "b"}
    assert metric_names('histogram_quantile(0.99, sum by (le) (rate(c_bucket[$x])))') \
        == {"c_bucket"}
    assert metric_names("time() - d_seconds offset 5m") == {"d_seconds"}


def test_promtool_checks_the_rules(promtool):
    result = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rule_expressions())} rules found" in result.stdout


def test_rule_unit_tests_pass(promtool):
    """Every alert is exercised by distractd-rules.test.yml, firing and silent."""
    tested = {case["alertname"] for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
              for case in test["alert_rule_test"]}
    assert tested == set(_rule_expressions())
    result = subprocess.run([promtool, "test", "rules", str(RULE_TESTS)], capture_output=True,
                            text=True, timeout=120, cwd=MONITORING)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_dashboard_queries_are_valid_promql(tmp_path, promtool):
    """The dashboard's queries, written as recording rules, pass ``promtool check rules``."""
    expressions = _dashboard_expressions()
    assert len(expressions) >= 30
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": expr} for i, (_, expr) in enumerate(expressions)]}]}
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_is_importable_json():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "distractd" and dashboard["schemaVersion"] >= 36
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel["title"] and panel["description"], panel
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_every_metric_named_is_one_the_daemon_exposes():
    """Scrape a real daemon (per-stream values on, so every family shows) and compare the names
    every dashboard query, dashboard variable and alert selects."""
    daemon = Daemon(["metrics.per_stream=true", "service.status_interval_s=0.2"])
    try:
        exposed = {sample.name for family in text_string_to_metric_families(daemon.scrape())
                   for sample in family.samples} | PROMETHEUS_SERIES
    finally:
        assert daemon.stop() == 0
    named = {}
    for title, expr in _dashboard_expressions():
        for name in metric_names(expr):
            named.setdefault(name, f"dashboard panel {title!r}")
    for name in _variable_metrics():
        named.setdefault(name, "dashboard variable")
    for alert, expr in _rule_expressions().items():
        for name in metric_names(expr):
            named.setdefault(name, f"alert {alert}")
    assert {"distractd_input_wall_rate_hertz", "distractd_loop_status_timestamp_seconds",
            "distractd_processing_latency_seconds_bucket", "up"} <= set(named)
    unknown = {name: where for name, where in named.items() if name not in exposed}
    assert not unknown, unknown
