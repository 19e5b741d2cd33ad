"""Bad configurations are rejected with an error naming the template, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from haptic.config.errors import ConfigError
from haptic.validation.config_file import compile_config, object_name, read_config_file


def write(tmp_path: Path, spec: dict[str, Any], **metadata: Any) -> Path:
    doc = {
        "apiVersion": "haproxy-haptic.org/v1alpha1",
        "kind": "HAProxyTemplateConfig",
        "metadata": {"name": "cfg", **metadata},
        "spec": {
            "credentialsSecretRef": {"name": "creds"},
            "podSelector": {"matchLabels": {"app": "haproxy"}},
            "watchedResources": {"things": {"apiVersion": "v1", "resources": "things", "indexBy": ["metadata.name"]}},
            "haproxyConfig": {"template": "global\n"},
            **spec,
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def compile_file(path: Path) -> None:
    config = read_config_file(path)
    compile_config(config, object_name=object_name(config, path))


def test_template_syntax_error_names_field_template_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, {"templateSnippets": {"backends-x": {"template": "ok\nok\n{% for x in %}\n"}}})
    with pytest.raises(ConfigError) as info:
        compile_file(path)
    assert info.value.path == "spec.templateSnippets.backends-x.template"
    assert "template 'backends-x' line 3" in str(info.value)
    assert str(info.value).startswith("HAProxyTemplateConfig cfg: ")


def test_unknown_filter_names_field_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, {"haproxyConfig": {"template": "global\n    maxconn {{ 5 | frobnicate }}\n"}})
    with pytest.raises(ConfigError) as info:
        compile_file(path)
    assert info.value.path == "spec.haproxyConfig.template"
    assert "line 2" in str(info.value) and "No filter named 'frobnicate'" in str(info.value)


def test_map_template_error_names_the_map(tmp_path: Path) -> None:
    path = write(tmp_path, {"maps": {"host.map": {"template": "{{ }}"}}})
    with pytest.raises(ConfigError) as info:
        compile_file(path)
    assert info.value.path == "spec.maps.host.map.template"


def test_bad_jsonpath_names_the_field(tmp_path: Path) -> None:
    bad = {"things": {"apiVersion": "v1", "resources": "things", "indexBy": ["metadata.labels['x"]}}
    with pytest.raises(ConfigError) as info:
        compile_file(write(tmp_path, {"watchedResources": bad}))
    assert info.value.path.startswith("spec.watchedResources.things.indexBy")


def test_missing_required_field_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, {})
    doc = yaml.safe_load(path.read_text())
    del doc["spec"]["haproxyConfig"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as info:
        compile_file(path)
    assert info.value.path == "spec.haproxyConfig"


def test_bad_post_processing_regex_names_the_field(tmp_path: Path) -> None:
    steps = [{"type": "regex_replace", "params": {"pattern": "(", "replace": ""}}]
    with pytest.raises(ConfigError) as info:
        compile_file(write(tmp_path, {"haproxyConfig": {"template": "x", "postProcessing": steps}}))
    assert "postProcessing" in str(info.value)


def test_unreadable_or_invalid_yaml_and_unknown_library(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        read_config_file(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("spec: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_config_file(broken)
    path = write(tmp_path, {}, annotations={"haproxy-haptic.org/template-libraries": "nope"})
    with pytest.raises(ConfigError, match="unknown template library 'nope'"):
        read_config_file(path)


def test_multi_document_file_picks_the_config(tmp_path: Path) -> None:
    path = write(tmp_path, {})
    other = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}}
    path.write_text(yaml.safe_dump(other) + "---\n" + path.read_text())
    assert read_config_file(path).metadata.name == "cfg"
