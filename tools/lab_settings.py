"""JupyterLab defaults for the book, written into the venv (nothing outside it is touched).

No "get Jupyter news?" question on the first start and no update check (the book is read
offline), and ipywidgets saves widget state into notebooks so stored widgets render.

Usage: python tools/lab_settings.py   (``make install`` runs it)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True},
}


def main() -> int:
    # JupyterLab reads <prefix>/share/jupyter/lab/settings/overrides.json as the app's defaults
    target = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    for plugin, values in OVERRIDES.items():
        current.setdefault(plugin, {}).update(values)
    target.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    print(f"labkit: JupyterLab defaults in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
