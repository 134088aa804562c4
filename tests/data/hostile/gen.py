#!/usr/bin/python3
# gen.py: writes the hostile inputs that tests/unit/test_hostile.c and
# tests/e2e/hostile.sh feed to the library and the daemon (issue 6, part 2).
# Run with Debian's numpy: `/usr/bin/python3 tests/data/hostile/gen.py`;
# files land next to this script, the same bytes on every run.
import io
import os
import struct
import warnings
import zipfile

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, '..', '..', '..', 'examples', 'tiny_mlp')
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def put(name, data):
    if isinstance(data, str):
        data = data.encode('utf8')
    assert len(data) < 50 * 1024, name
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)


def npy_bytes(arr):
    b = io.BytesIO()
    npf.write_array(b, arr, version=(1, 0))
    return b.getvalue()


def raw_npy(header, data):
    """An .npy image with a hand-written header dict, padded like numpy's."""
    h = header.encode('utf8') + b'\n'
    pad = (-(10 + len(h))) % 64
    h = h[:-1] + b' ' * pad + b'\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data


def zip_of(members, compress=zipfile.ZIP_STORED):
    """members: list of (name, bytes). Fixed timestamps: deterministic."""
    b = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # duplicate names are on purpose
        with zipfile.ZipFile(b, 'w', compression=compress) as z:
            for name, data in members:
                zi = zipfile.ZipInfo(name, FIXED_TIME)
                zi.compress_type = compress
                with z.open(zi, 'w') as f:
                    f.write(data)
    return b.getvalue()


def mlp_members():
    with np.load(os.path.join(MLP, 'weights.npz')) as w:
        return [(k + '.npy', npy_bytes(w[k])) for k in w.files]


def spec_text():
    with open(os.path.join(MLP, 'spec.yaml')) as f:
        return f.read()


# ---- YAML: alias bombs and deep nesting ------------------------------------

def laughs(indent=''):
    """billion laughs: 9 levels of 9 aliases, 9^9 nodes if expanded"""
    out = [indent + 'l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for i in range(1, 10):
        out.append(indent + 'l%d: &l%d [%s]' % (i, i, ', '.join(['*l%d' % (i - 1)] * 9)))
    return '\n'.join(out) + '\n'


def deep_seq(n):
    return '[' * n + ']' * n


def deep_map(n):
    return '{a: ' * n + '1' + '}' * n


def yaml_files():
    put('spec_bomb.yaml', 'eulernpu: 1\nname: bomb\n' + laughs())
    put('spec_deep_seq.yaml', 'eulernpu: 1\nname: deep\ninputs: ' + deep_seq(5000) + '\n')
    put('spec_deep_map.yaml', 'eulernpu: 1\nname: deep\ntargets: ' + deep_map(5000) + '\n')
    # each anchor is shallow, each alias nests it deeper: depth after expansion
    lines = ['eulernpu: 1', 'name: deepalias', 'd0: &d0 [[[[[[[[[[x]]]]]]]]]]']
    for i in range(1, 10):
        lines.append('d%d: &d%d [[[[[[[[[*d%d]]]]]]]]]' % (i, i, i - 1))
    put('spec_deep_alias.yaml', '\n'.join(lines) + '\n')
    put('target_bomb.yaml', 'array: [16, 16]\n' + laughs())
    put('target_deep.yaml', 'array: ' + deep_seq(5000) + '\n')
    put('config_bomb.yaml', 'workers: 1\n' + laughs())
    put('config_deep.yaml', 'workers: ' + deep_seq(5000) + '\n')
    # non-UTF-8 bytes in names
    s = spec_text().encode('utf8')
    put('spec_badutf8_name.yaml', s.replace(b'name: tiny_mlp', b'name: tiny_\xff\xfe'))
    put('spec_badutf8_op.yaml', s.replace(b'{name: fc1, ', b'{name: f\xc3\x28, '))
    put('spec_badutf8_comment.yaml', b'# \xff\xff\n' + s)


# ---- huge declared shapes -----------------------------------------------------

def shape_files():
    s = spec_text()
    x = '{name: x, dtype: float32, shape: [1, 8]}'
    assert x in s
    # product 2^96 overflows 64 bits; 2^32 elements exceeds 1<<28
    put('spec_shape_overflow.yaml',
        s.replace(x, '{name: x, dtype: float32, shape: [4294967296, 4294967296, 4294967296]}'))
    put('spec_shape_elems.yaml',
        s.replace(x, '{name: x, dtype: float32, shape: [65536, 65536]}'))
    put('spec_shape_dim64.yaml',
        s.replace(x, '{name: x, dtype: float32, shape: [18446744073709551616, 8]}'))
    w = '{name: fc1.w, dtype: float32, shape: [8, 16]}'
    assert w in s
    put('spec_wshape_overflow.yaml',
        s.replace(w, '{name: fc1.w, dtype: float32, shape: [8, 9223372036854775807]}'))
    for tag, shape in (('overflow', '(4294967296, 4294967296, 4294967296)'),
                       ('elems', '(65536, 65536)'), ('bigdim', '(99999999999999999999999, 8)')):
        hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
        wm = [(n, raw_npy(hdr, b'\0' * 512) if n == 'fc1.w.npy' else d)
              for n, d in mlp_members()]
        put('weights_hdr_%s.npz' % tag, zip_of(wm))
        put('input_hdr_%s.npz' % tag, zip_of([('x.npy', raw_npy(hdr, b'\0' * 32))]))


# ---- zip bombs -------------------------------------------------------------

def bomb_files():
    # 10 MiB of float32 zeros as input 'x', deflated to about 10 KiB
    zeros = npy_bytes(np.zeros((1, 10 << 18), dtype='<f4'))
    z = zip_of([('x.npy', zeros)], zipfile.ZIP_DEFLATED)
    put('bomb.npz', z)
    # the same, with local and central headers claiming 4096 bytes
    real = struct.pack('<I', len(zeros))
    assert z.count(real) == 2
    put('bomb_lie.npz', z.replace(real, struct.pack('<I', 4096)))
    # a weights bomb: fc1.w declared (8, 16) but inflating to 10 MiB of data
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), }"
    wm = [(n, raw_npy(hdr, b'\0' * (10 << 20)) if n == 'fc1.w.npy' else d)
          for n, d in mlp_members()]
    put('weights_bomb.npz', zip_of(wm, zipfile.ZIP_DEFLATED))


# ---- member names ------------------------------------------------------------

def name_files():
    x = npy_bytes(np.zeros((1, 8), dtype='<f4'))
    for tag, name in (('dotdot', '../x.npy'), ('subdir', 'a/b.npy'), ('abs', '/etc/x.npy'),
                      ('backslash', 'a\\x.npy'), ('dotdotbs', '..\\x.npy'), ('txt', 'x.txt'),
                      ('noext', 'x'), ('empty', '.npy')):
        put('name_%s.npz' % tag, zip_of([(name, x)]))
    put('name_dup.npz', zip_of([('x.npy', x), ('x.npy', x)]))
    # non-UTF-8 bytes: written under a placeholder, then patched in place
    # (local header and central directory; the UTF-8 flag stays clear)
    for tag, raw in (('badutf8', b'\xff\xfe.npy'), ('overlong', b'\xc0\xaf.npy'),
                     ('nul', b'x\x00.npy')):
        z = zip_of([('QQ.npy', x)])
        assert z.count(b'QQ.npy') == 2
        put('name_%s.npz' % tag, z.replace(b'QQ.npy', raw))
    # the same hostile names as weights of tiny_mlp (one good member first)
    wm = mlp_members()
    put('weights_name_dotdot.npz', zip_of(wm[:1] + [('../fc1.b.npy', wm[1][1])] + wm[2:]))


def main():
    yaml_files()
    shape_files()
    bomb_files()
    name_files()


if __name__ == '__main__':
    main()
