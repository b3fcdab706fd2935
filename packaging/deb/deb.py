#!/usr/bin/python3
"""The Debian package's derived parts (docs/packaging.md).

  deb.py depends [--elf FILE]... [--dlopen-from BIN --dlopen SONAME...] [--file PATH...]
      A Depends (or Recommends) line: the packages owning the shared libraries the ELF
      files name (readelf NEEDED, resolved as ldd resolves them), the
      libraries BIN opens at run time (each SONAME must be a string in BIN,
      so the list cannot go stale) and any other file (a Mesa driver);
      owners found with dpkg -S. libc6 carries the newest GLIBC_ symbol
      version the files use.

  deb.py desktop FyneApp.toml EXEC
      The freedesktop entry, from FyneApp.toml's details and [LinuxAndBSD].

  deb.py check DEB ROOT
      Fails unless the control file's Depends (dpkg-deb -I) names the owner of
      every library the unpacked binary and ONNX Runtime link directly, and
      its dependency closure (the installed packages' Depends) holds the
      owner of every library ldd lists for them; no library may be missing.

Only the Python standard library and dpkg's own tools are used.
"""

import argparse
import os
import re
import subprocess
import sys
import tomllib


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def needed(elf):
    """The sonames an ELF file links directly (DT_NEEDED)."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", elf))


def ldd(elf):
    """soname -> resolved path for every library ldd loads for elf."""
    out = subprocess.run(["ldd", elf], capture_output=True, text=True).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+|not found)", line)
        if m:
            libs[m.group(1)] = None if m.group(2) == "not found" else m.group(2)
        else:
            m = re.match(r"\s*(/\S+) \(0x", line)  # the dynamic loader
            if m:
                libs[os.path.basename(m.group(1))] = m.group(1)
    return libs


def ldconfig():
    """soname -> path from the loader cache, this machine's ABI first."""
    cache, abi = {}, "x86-64" if os.uname().machine == "x86_64" else ""
    for line in run("/sbin/ldconfig", "-p").splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and abi in m.group(2):
            cache.setdefault(m.group(1), m.group(3))
    return cache


_owners = {}


def owners(paths):
    """Look up with one dpkg -S the packages owning paths, trying the
    merged-/usr twin and the resolved link of each too."""
    variants = {}
    for path in paths:
        cands = [path, os.path.realpath(path)]
        for p in list(cands):
            if p.startswith("/lib"):
                cands.append("/usr" + p)
            elif p.startswith("/usr/lib"):
                cands.append(p[len("/usr"):])
        variants[path] = cands
    todo = sorted({c for cs in variants.values() for c in cs} - _owners.keys())
    if todo:
        out = subprocess.run(["dpkg-query", "-S", *todo], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("diversion ") or ": " not in line:
                continue
            pkgs, p = line.rsplit(": ", 1)
            _owners.setdefault(p, pkgs.split(", ")[0].split(":")[0])
    for path, cands in variants.items():
        found = next((_owners[c] for c in cands if c in _owners), None)
        if not found:
            sys.exit(f"deb.py: no package owns {path}")
        _owners[path] = found


def owner(path):
    """The package owning path (dpkg -S)."""
    if path not in _owners:
        owners([path])
    return _owners[path]


def glibc_min(elfs):
    best = (0,)
    for e in elfs:
        for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", run("objdump", "-T", e)):
            best = max(best, tuple(int(x) for x in v.split(".")))
    return ".".join(map(str, best)) if best != (0,) else None


def cmd_depends(a):
    pkgs = []

    def add(p):
        if p not in pkgs:
            pkgs.append(p)

    for elf in a.elf:
        resolved = ldd(elf)
        for so in needed(elf):
            if not resolved.get(so):
                sys.exit(f"deb.py: {elf} needs {so}, which is not installed here")
            add(owner(resolved[so]))
    if a.dlopen:
        data = open(a.dlopen_from, "rb").read()
        cache = ldconfig()
        for so in a.dlopen:
            if so.encode() + b"\0" not in data:
                sys.exit(f"deb.py: {a.dlopen_from} does not name {so}: drop it from the list")
            if so not in cache:
                sys.exit(f"deb.py: {so}, opened by {a.dlopen_from} at run time, is not installed here")
            add(owner(cache[so]))
    for f in a.file:
        if not os.path.exists(f):
            sys.exit(f"deb.py: {f} is not installed here")
        add(owner(f))
    v = glibc_min(a.elf)
    out = [f"{p} (>= {v})" if p == "libc6" and v else p for p in sorted(pkgs)]
    print(", ".join(out))


def cmd_desktop(a):
    with open(a.toml, "rb") as f:
        t = tomllib.load(f)
    d, l = t["Details"], t.get("LinuxAndBSD", {})

    def lst(v):
        return "".join(x + ";" for x in v)

    lines = ["[Desktop Entry]", "Type=Application", f"Name={d['Name']}"]
    if l.get("GenericName"):
        lines.append(f"GenericName={l['GenericName']}")
    if l.get("Comment"):
        lines.append(f"Comment={l['Comment']}")
    # GLFW names the X11 window class after the window's first title, the
    # app's name: the dock groups the window under this entry by it.
    lines += [f"Exec={a.exec}", f"Icon={d['ID']}", f"StartupWMClass={d['Name']}", "Terminal=false"]
    if l.get("Categories"):
        lines.append(f"Categories={lst(l['Categories'])}")
    if l.get("Keywords"):
        lines.append(f"Keywords={lst(l['Keywords'])}")
    print("\n".join(lines))


def parse_depends(field):
    """[[alternative, ...], ...] of package names, versions dropped."""
    groups = []
    for g in filter(None, (x.strip() for x in field.split(","))):
        groups.append([re.sub(r"\s*\(.*\)|:\S+", "", alt).strip() for alt in g.split("|")])
    return groups


def installed():
    """name -> (Depends + Pre-Depends, Provides) of every installed package."""
    out = run("dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Pre-Depends}, ${Depends}\t${Provides}\n")
    pk = {}
    for line in out.splitlines():
        st, name, deps, prov = line.split("\t")
        if st.startswith("ii"):
            pk[name] = (parse_depends(deps), [p[0] for p in parse_depends(prov)])
    return pk


def closure(roots, pk):
    providers = {}
    for name, (_, prov) in pk.items():
        for p in prov:
            providers.setdefault(p, []).append(name)
    seen, todo = set(), list(roots)
    while todo:
        n = todo.pop()
        for cand in [n] + providers.get(n, []):
            if cand in pk and cand not in seen:
                seen.add(cand)
                for alts in pk[cand][0]:
                    todo.extend(alts)
    return seen


def cmd_check(a):
    control = run("dpkg-deb", "-I", a.deb, "control")
    m = re.search(r"^Depends: (.*(?:\n .*)*)", control, re.M)
    if not m:
        sys.exit("deb.py: the control file has no Depends")
    groups = parse_depends(m.group(1))
    named = {p for g in groups for p in g}
    pk = installed()
    deep = closure(named, pk)
    elfs = [os.path.join(a.root, "usr/bin/vetlens"), os.path.join(a.root, "usr/lib/vetlens")]
    elfs[1] = os.path.join(elfs[1], next(f for f in os.listdir(elfs[1]) if f.startswith("libonnxruntime.so")))
    bad, direct, total = [], 0, 0
    for elf in elfs:
        libs = ldd(elf)
        owners([p for p in libs.values() if p])
        for so, path in libs.items():
            if path is None:
                bad.append(f"{elf}: {so} not found")
                continue
            total += 1
            p = owner(path)
            if p not in deep:
                bad.append(f"{elf}: {so} ({p}) is not covered by Depends")
        for so in needed(elf):
            direct += 1
            if libs.get(so) and owner(libs[so]) not in named:
                bad.append(f"{elf} links {so} directly, but its package {owner(libs[so])} is not in Depends")
    if bad:
        sys.exit("deb.py: " + "\n  ".join(bad))
    print(f"Depends names {len(named)} packages: the owners of all {direct} directly linked libraries; "
          f"its closure of {len(deep)} packages holds the owners of all {total} libraries ldd lists")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("depends")
    d.add_argument("--elf", action="append", default=[])
    d.add_argument("--dlopen-from")
    d.add_argument("--dlopen", nargs="*", default=[])
    d.add_argument("--file", nargs="*", default=[])
    e = sub.add_parser("desktop")
    e.add_argument("toml")
    e.add_argument("exec")
    c = sub.add_parser("check")
    c.add_argument("deb")
    c.add_argument("root")
    a = ap.parse_args()
    {"depends": cmd_depends, "desktop": cmd_desktop, "check": cmd_check}[a.cmd](a)


if __name__ == "__main__":
    main()
