"""deploy/z2jh/config.yaml against the Zero to JupyterHub chart's values schema.

Helm merges the user's values over the chart's ``values.yaml`` and validates
the result against the chart's schema before rendering; this test does the
same with the schema and defaults vendored in ``deploy/z2jh/chart/`` (see its
README for the source commit).  It also checks what the course relies on: the
image, the limits, the culler, the exchange volume and the two roles'
configuration files.  Nothing is deployed.
"""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml

Z2JH = Path(__file__).resolve().parents[1] / "deploy" / "z2jh"


def helm_merge(base, over):
    """Helm's value merge: maps key by key, everything else replaced, ``None`` deletes.

    >>> helm_merge({"a": {"b": 1, "c": 2}, "l": [1]}, {"a": {"c": None, "d": 4}, "l": [2]})
    {'a': {'b': 1, 'd': 4}, 'l': [2]}
    """
    out = copy.deepcopy(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = helm_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@pytest.fixture(scope="module")
def chart():
    schema = yaml.safe_load((Z2JH / "chart" / "values.schema.yaml").read_text(encoding="utf-8"))
    defaults = yaml.safe_load((Z2JH / "chart" / "values.yaml").read_text(encoding="utf-8"))
    config = yaml.safe_load((Z2JH / "config.yaml").read_text(encoding="utf-8"))
    return schema, defaults, config


def test_the_charts_own_defaults_validate(chart):
    schema, defaults, _ = chart
    jsonschema.validate(defaults, schema)          # the vendored pair belongs together


def test_config_validates_against_the_chart_schema(chart):
    schema, defaults, config = chart
    jsonschema.validate(helm_merge(defaults, config), schema)


def test_a_misspelt_key_is_caught(chart):
    schema, defaults, config = chart
    bad = helm_merge(config, {"singleuser": {"memmory": {"limit": "2G"}}})
    with pytest.raises(jsonschema.ValidationError, match="memmory"):
        jsonschema.validate(helm_merge(defaults, bad), schema)


def test_config_says_what_the_course_needs(chart):
    _, _, config = chart
    single = config["singleuser"]
    assert single["defaultUrl"].endswith("/chapters/00_start_here.ipynb")
    assert single["memory"]["limit"] and single["cpu"]["limit"]
    assert config["cull"]["enabled"] and config["cull"]["timeout"] > 0
    mounts = {m["mountPath"] for m in single["storage"]["extraVolumeMounts"]}
    assert "/srv/nbgrader/exchange" in mounts
    files = single["extraFiles"]
    for role in ("learner", "instructor"):
        assert any(f["mountPath"] == f"/etc/interconnect-city/{role}/nbgrader_config.py"
                   for f in files.values()), role
    learner_server = next(f for f in files.values()
                          if f["mountPath"] == "/etc/interconnect-city/learner/"
                                               "jupyter_server_config.json")
    assert "nbgrader.server_extensions.formgrader" not in \
        learner_server["data"]["ServerApp"]["jpserver_extensions"]
    assert "JUPYTER_CONFIG_PATH" in config["hub"]["extraConfig"]["10-course-roles"]


def test_image_build_leaves_the_answers_out():
    script = (Z2JH / "build_image.sh").read_text(encoding="utf-8")
    assert "repo2docker" in script and "--target-repo-dir /srv/interconnect-city" in script
    assert 'rm -rf "$work/solutions"' in script
