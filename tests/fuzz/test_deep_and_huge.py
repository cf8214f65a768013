"""Input nested deeper than Python's parsers recurse, files larger than the stated bound, and
bytes that are not UTF-8: every reader answers with an error of governor's own tree."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from governor.backends.messages import ToolCall
from governor.backends.openai import OpenAIBackend
from governor.config import BackendConfig
from governor.errors import BackendResponseError, ConfigError, GovernorError
from governor.files import MAX_MAPPING_BYTES, json_lines, load_mapping
from governor.guard import load_policy
from governor.ltl.english.domain_file import load_domain_file
from governor.trace import read_trace
from governor.worlds.smalltalk.audit import read_transcript

DEEP_JSON = "[" * 5000 + "]" * 5000
DEEP_YAML = "a: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("read", [load_mapping, load_policy, load_domain_file])
@pytest.mark.parametrize(
    ("name", "raw", "says"),
    [
        ("deep.yaml", DEEP_YAML.encode(), "nested too deeply"),
        ("deep.json", ('{"a": ' + DEEP_JSON + "}").encode(), "nested too deeply"),
        ("bytes.yaml", b"name: caf\xe9\n", "expected UTF-8 text"),
        ("huge.yaml", b"a: '" + b"x" * (MAX_MAPPING_BYTES + 1) + b"'\n", "at most 4,194,304 bytes"),
    ],
)
def test_config_files(tmp_path: Path, read: object, name: str, raw: bytes, says: str) -> None:
    path = tmp_path / name
    path.write_bytes(raw)
    with pytest.raises(GovernorError, match=says) as err:
        read(path)  # type: ignore[operator]
    assert name in str(err.value) and len(str(err.value)) < 1000


def test_a_trace_line_nested_too_deeply(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(DEEP_JSON + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1"):
        read_trace(path)


def test_a_json_lines_set_names_its_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"text": "a"}\n\n' + DEEP_JSON + "\n", encoding="utf-8")
    read = json_lines(path)
    assert next(read) == (1, {"text": "a"})
    with pytest.raises(
        ConfigError, match=r"set\.jsonl:3: expected a JSON object.*nested too deeply"
    ):
        next(read)
    path.write_bytes(b'{"text": "\xff"}\n')
    with pytest.raises(ConfigError, match="expected UTF-8 text"):
        list(json_lines(path))


def test_a_transcript_line_nested_too_deeply(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(DEEP_JSON + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: not valid JSON: nested too deeply"):
        read_transcript(path)


def test_tool_arguments_nested_too_deeply() -> None:
    call = ToolCall("c1", "search", '{"q": ' + DEEP_JSON + "}")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        call.args()


def test_an_answer_nested_too_deeply_is_a_response_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=('{"choices": ' + DEEP_JSON + "}").encode())

    config = BackendConfig("http://127.0.0.1:9/v1", "m", max_retries=0)
    backend = OpenAIBackend(config, transport=httpx.MockTransport(answer))
    with backend, pytest.raises(BackendResponseError, match="expected a JSON body"):
        backend.chat("hi")
