#!/usr/bin/python3
"""Compare two files of JSON values (one a line, or pretty-printed) (Linux's and wine's output) number by
number: the same keys, lists, strings and booleans, and numbers within TOL.
Prints the count and the largest absolute difference; exits 1 beyond TOL.

  jsondiff.py TOL A B [DOTTED.KEY ...]   (keys removed first: run times)
"""
import json,sys
def walk(a,b,path,out):
    if isinstance(a,dict):
        assert isinstance(b,dict) and a.keys()==b.keys(), (path, a.keys() if isinstance(a,dict) else a, b)
        for k in a: walk(a[k],b[k],path+"."+k,out)
    elif isinstance(a,list):
        assert isinstance(b,list) and len(a)==len(b), path
        for i,(x,y) in enumerate(zip(a,b)): walk(x,y,f"{path}[{i}]",out)
    elif isinstance(a,(int,float)) and not isinstance(a,bool):
        out.append((abs(a-b),path,a,b))
    else:
        assert a==b,(path,a,b)
tol=float(sys.argv[1])
def docs(path):  # the JSON values in a file, one a line or pretty-printed
    text, dec, i, out = open(path).read(), json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace(): i += 1
        if i == len(text): return out
        v, i = dec.raw_decode(text, i); out.append(v)
la=docs(sys.argv[2]); lb=docs(sys.argv[3])
assert len(la)==len(lb)
ignore=set(sys.argv[4:])
out=[]
for i,(a,b) in enumerate(zip(la,lb)):
    for k in ignore:
        for d in (a,b):
            cur=d
            ks=k.split(".")
            for kk in ks[:-1]: cur=cur.get(kk,{}) if isinstance(cur,dict) else {}
            if isinstance(cur,dict): cur.pop(ks[-1],None)
    walk(a,b,f"line{i}",out)
out.sort(reverse=True)
print("numbers compared:",len(out),"max abs diff:",out[0][0] if out else 0)
for d in out[:5]: print(" ",d)
if out and out[0][0] > tol:
    print("FAIL: beyond", tol); sys.exit(1)
