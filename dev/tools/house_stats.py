#!/usr/bin/env python3
"""The house's numbers (issue 17): source files over 700 lines, functions over 80 lines and the
longest parameter lists in src/ and app/. A function is a top-level definition: a line that starts
a declarator with '(' at column 0 (after its return type) and opens a body; its length runs to the
matching closing brace. Usage: dev/tools/house_stats.py [ROOT]"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
files = []
for top in ('src', 'app'):
    for d, _, fs in os.walk(os.path.join(root, top)):
        for f in fs:
            if f.endswith(('.c', '.h', '.cu', '.cuh')):
                files.append(os.path.join(d, f))

def strip(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r"'(\\.|[^'\\])'", "' '", text)  # character literals ('"' would open a string)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)

big, funcs = [], []
for p in sorted(files):
    raw = open(p, errors='replace').read()
    n = raw.count('\n')
    if n > 700: big.append((n, os.path.relpath(p, root)))
    lines = strip(raw).split('\n')
    i = 0
    while i < len(lines):
        l = lines[i]
        if l and not l[0].isspace() and '(' in l and not l.startswith(('#', 'typedef', 'struct', 'enum')) \
                and not l.rstrip().endswith(';'):
            # gather the signature up to '{' or ';'
            sig, j = l, i
            while '{' not in sig and ';' not in sig and j + 1 < len(lines) and j - i < 12:
                j += 1
                sig += ' ' + lines[j]
            if '{' in sig and (';' not in sig or sig.index('{') < sig.index(';')):
                head = re.sub(r'__launch_bounds__\s*\([^)]*\)', '', sig[:sig.index('{')])
                m = re.search(r'([A-Za-z_]\w*)\s*\((.*)\)\s*$', head.strip(), flags=re.S)
                depth, k = 0, j
                for k in range(j, len(lines)):
                    depth += lines[k].count('{') - lines[k].count('}')
                    if depth <= 0 and k >= j and '}' in lines[k]:
                        break
                if m and '=' not in head.split('(')[0]:
                    params = m.group(2).strip()
                    np = 0 if params in ('', 'void') else params.count(',') + 1
                    funcs.append((k - i + 1, np, m.group(1), os.path.relpath(p, root)))
                i = k
        i += 1

print('files over 700 lines: %d' % len(big))
for n, p in sorted(big, reverse=True): print('  %5d %s' % (n, p))
long = sorted([f for f in funcs if f[0] > 80], reverse=True)
print('functions over 80 lines: %d' % len(long))
for f in long: print('  %4d lines  %s (%s)' % (f[0], f[2], f[3]))
wide = sorted(funcs, key=lambda f: -f[1])[:5]
print('largest parameter lists:')
for f in wide: print('  %2d parameters  %s (%s)' % (f[1], f[2], f[3]))
