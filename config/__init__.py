"""Settings, URLs and wiring.

Imported before any app, hence before numpy, which reads its huge-page switch
at import: with transparent huge pages on `madvise` (the usual default) numpy
asks them for every large array, and a snapshot refresh, which allocates many,
then waits on the kernel compacting memory
(docs/benchmarks.md, "Query latency and snapshot memory"). An operator may still
set the variable.
"""

import os

os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
