"""The example of docs/python.md runs as written (from the source tree, whose test data it reads)."""
import os
import re

from conftest import SOURCE_DIR


def test_docs_python_md_example_runs(monkeypatch):
    text = (SOURCE_DIR / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/python.md has no python example"
    monkeypatch.chdir(SOURCE_DIR)
    for code in blocks:
        exec(compile(code, "docs/python.md", "exec"), {"__name__": "docs_example"})
    assert os.getcwd() == str(SOURCE_DIR)
