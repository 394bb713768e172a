# SPDX-License-Identifier: GPL-3.0-or-later
"""verify.study on methods.json (with processor only) for T=10 and T=100."""
import json, sys
from verify_orders import study, srkn11b, srkn14a
T = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
methods = {'SRKN11b (BM, ord6)': {'kernel': srkn11b(), 'proc': None},
           'SRKN14a (BM, ord6)': {'kernel': srkn14a(), 'proc': None}}
for k, v in json.load(open('methods.json')).items():
    methods[k] = {'kernel': v['kernel'], 'proc': v['proc']}
study(methods, T=T)
