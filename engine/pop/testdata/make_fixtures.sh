#!/bin/sh
# Regenerates the PoP test fixtures (synthetic composites; seeds 35,000,000+
# are used nowhere else). Run from the repository root.
set -e
T=models/train
O=engine/pop/testdata
rm -f $O/*.jpg $O/*.png $O/truth_*.json
/usr/bin/python3 $T/pop_composites.py $O --kind screen --n 8 --seed0 35000000 --size 960x540
/usr/bin/python3 $T/pop_composites.py $O --kind radiograph --n 4 --seed0 35100000
/usr/bin/python3 $T/pop_composites.py $O/bench --kind screen --n 1 --seed0 35200000 --size 1920x1080
