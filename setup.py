"""setup.py — the `starwave` Python package: python/starwave and the module CMake builds from the
same sources as the command line (docs/python.md). Offline: `pip install --no-build-isolation .`
after scripts/setup (Debian's pybind11, numpy and setuptools). STARWAVE_BUILD_DIR names a CMake
build folder to build in (default: one under pip's build folder); CMAKE_ARGS adds options."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
VERSION = re.search(r"project\(starwave VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        build = pathlib.Path(os.environ.get("STARWAVE_BUILD_DIR") or pathlib.Path(self.build_temp) / "cmake").resolve()
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                               "-DSTARWAVE_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable,
                               *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_starwave", "-j", str(os.cpu_count() or 1)])
        built = sorted((build / "python" / "starwave").glob("_starwave*.so"))
        if not built:
            sys.exit("setup.py: CMake built no _starwave module in %s" % (build / "python" / "starwave"))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[-1], target)


setup(
    name="starwave",
    version=VERSION,
    description="Seismic modelling, exact gradients, RTM and FWI on StarPU (CPUs and GPUs)",
    license="Apache-2.0",
    packages=["starwave"],
    package_dir={"": "python"},
    ext_modules=[Extension("starwave._starwave", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
