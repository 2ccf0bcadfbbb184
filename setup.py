"""pip's build of the Python package dualgibbs (the PEP 517 backend is setuptools, pyproject.toml).

`pip install .` and `pip wheel .` run CMake: configure the source tree with the Python package on and the tests,
benchmarks, command and MPI off, build the extension (and with it libdualgibbs and libdualgibbs_paper), install the
CMake component python_wheel (python/CMakeLists.txt) to a staging directory and copy the extension and each shared
library, under its SONAME, into the package next to the pure-Python files of python/dualgibbs. The extension finds the
libraries through its RPATH of $ORIGIN, so the installed package needs nothing of the build.

Everything the build writes goes under one directory, build/pip in the source tree (ignored by git) unless the
environment says otherwise. The environment:
    DUALGIBBS_PIP_BUILD_DIR   the build directory (setuptools' build and metadata directories, CMake's build tree)
    DUALGIBBS_PIP_JOBS        parallel build jobs (default: the number of CPUs)
    DUALGIBBS_PIP_CMAKE_ARGS  extra arguments to the CMake configure step (split on white space)
    CMAKE                     the cmake executable (default: cmake on PATH)
ccache is used when it is on PATH (its own variables, CCACHE_DIR and others, pass through).
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.abspath(os.environ.get("DUALGIBBS_PIP_BUILD_DIR") or os.path.join(SOURCE_DIR, "build", "pip"))
# The file names of the extension's shared libraries: the SONAME (libdualgibbs.so.0), not the versioned file or the
# development link.
SONAME = re.compile(r"^lib[\w.+-]*\.so\.\d+$")


def project_version():
    """The VERSION of project() in CMakeLists.txt: one version for the library, the command and the package."""
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as f:
        found = re.search(r"project\(\s*dualgibbs\s+VERSION\s+([0-9.]+)", f.read())
    if not found:
        raise RuntimeError("setup.py: no project(dualgibbs VERSION ...) in CMakeLists.txt")
    return found.group(1)


def cmake_configure_args(cmake_build):
    """The configure command: Release, the Python package for this interpreter, nothing else."""
    args = [
        os.environ.get("CMAKE", "cmake"), "-S", SOURCE_DIR, "-B", cmake_build,
        "-DCMAKE_BUILD_TYPE=Release",
        "-DDUALGIBBS_BUILD_PYTHON=ON", "-DDUALGIBBS_PYTHON_WHEEL=ON",
        "-DDUALGIBBS_BUILD_TESTS=OFF", "-DDUALGIBBS_BUILD_APPS=OFF", "-DDUALGIBBS_BUILD_BENCH=OFF",
        "-DDUALGIBBS_BUILD_DOCS=OFF", "-DDUALGIBBS_WITH_MPI=OFF",
        "-DPython3_EXECUTABLE=" + sys.executable,
    ]
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    return args + os.environ.get("DUALGIBBS_PIP_CMAKE_ARGS", "").split()


class CMakeBuild(build_ext):
    """build_ext for the one extension dualgibbs._core, made by CMake."""

    def run(self):
        for ext in self.extensions:
            self.build_cmake(ext)

    def build_cmake(self, ext):
        cmake = os.environ.get("CMAKE", "cmake")
        cmake_build = os.path.join(BUILD_DIR, "cmake")
        staging = os.path.join(BUILD_DIR, "staging")
        jobs = os.environ.get("DUALGIBBS_PIP_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(cmake_configure_args(cmake_build))
        subprocess.check_call([cmake, "--build", cmake_build, "--target", "dualgibbs_python", "-j", jobs])
        shutil.rmtree(staging, ignore_errors=True)
        subprocess.check_call([cmake, "--install", cmake_build, "--component", "python_wheel", "--prefix", staging])
        self.copy_into_package(os.path.join(staging, "dualgibbs"), self.get_ext_fullpath(ext.name))

    def copy_into_package(self, staged, ext_path):
        """The extension under the name setuptools expects, each library under its SONAME (symbolic links
        followed: a wheel holds plain files)."""
        package_dir = os.path.dirname(ext_path)
        os.makedirs(package_dir, exist_ok=True)
        extension = [f for f in os.listdir(staged) if f.startswith("_core.") and f.endswith(".so")]
        libraries = [f for f in os.listdir(staged) if SONAME.match(f)]
        if len(extension) != 1 or not libraries:
            raise RuntimeError(f"setup.py: unexpected files in {staged}: {sorted(os.listdir(staged))}")
        shutil.copy(os.path.join(staged, extension[0]), ext_path)
        for name in libraries:
            shutil.copy(os.path.join(staged, name), os.path.join(package_dir, name))


os.makedirs(BUILD_DIR, exist_ok=True)
setup(
    version=project_version(),
    packages=["dualgibbs"],
    package_dir={"": "python"},
    ext_modules=[Extension("dualgibbs._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' build and metadata directories beside CMake's, out of the source tree proper.
    options={"build": {"build_base": BUILD_DIR}, "egg_info": {"egg_base": BUILD_DIR}},
    zip_safe=False,
)
