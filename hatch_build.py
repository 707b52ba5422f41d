"""Build hook: record the hashes of the course's judging files in the wheel
(`tutor/_course/COURSE-SHA256.json`, see tutor/coursefiles.py)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CourseHashesHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return  # the course is read from the checkout, which authors edit
        root = Path(self.root)
        sys.path.insert(0, str(root))
        from tutor.coursefiles import MANIFEST, write_manifest

        target = Path(tempfile.mkdtemp(prefix="tutor-build-")) / MANIFEST
        write_manifest(root, target)
        build_data["force_include"][str(target)] = f"tutor/_course/{MANIFEST}"
