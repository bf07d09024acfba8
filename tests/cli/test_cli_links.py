#!/usr/bin/python3
"""Issue 14, the fixed cost of a call: the `racksim` executable links the C++ runtime and fmt's two out-of-line
functions into itself (cli/CMakeLists.txt, cli/light/fmt_vformat.cpp), so that a call loads and relocates no
libstdc++.so, libgcc_s or libfmt.so. One more fmt function called out of line (detail::is_printable, which fmt::join of strings instantiates)
made the link take libfmt.so again, and libfmt.so brings libstdc++.so with it: every call paid for loading both
while the build still said it did not (found in session 44: 54 page faults of 273 at a bare start). This reads
the executable's NEEDED list, which is what the loader opens. Sanitizer builds link the shared runtime on
purpose (their runtime interposes operator new) and are skipped."""
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]

out = subprocess.run(["readelf", "-d", BIN], capture_output=True, text=True, check=True).stdout
needed = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
if not needed:
    print(f"FAIL: no NEEDED entry read from {BIN}:\n{out}")
    sys.exit(1)
if any(n.startswith(("libasan", "libubsan", "libtsan")) for n in needed):
    print(f"skipped: a sanitizer build ({', '.join(needed)})")
    sys.exit(0)
loaded = [n for n in needed if n.startswith(("libstdc++", "libgcc_s", "libfmt"))]
if loaded:
    print(f"FAIL: racksim loads {', '.join(loaded)} at every call (NEEDED: {', '.join(needed)}); "
          "a new out-of-line fmt function belongs in cli/light/fmt_vformat.cpp")
    sys.exit(1)
print(f"ok: racksim needs only {', '.join(needed)}")
