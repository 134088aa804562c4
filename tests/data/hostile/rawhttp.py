#!/usr/bin/python3
# rawhttp.py: the raw-socket clients of tests/e2e/hostile.sh, which curl
# cannot be: bodies shorter or longer than Content-Length, and slow clients
# that send one byte a second. Every mode is bounded in time and prints
# key=value lines for the test to assert on.
#
#   rawhttp.py SOCK short  METHOD PATH CLEN BODYFILE close|stall
#   rawhttp.py SOCK long   METHOD PATH CLEN BODYFILE
#   rawhttp.py SOCK slow   N MAXSECS header|body [PATH]
#   rawhttp.py SOCK flood  N HOLDSECS
import os
import socket
import sys
import time

SOCK = sys.argv[1]


def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(SOCK)
    return s


def head(method, path, clen, extra=''):
    return ('%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n%s\r\n'
            % (method, path, clen, extra)).encode()


def read_all(s, limit):
    """Everything the server sends until it closes (or `limit` seconds)."""
    s.settimeout(limit)
    out = b''
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < limit:
            b = s.recv(65536)
            if not b:
                return out, 'eof'
            out += b
    except socket.timeout:
        return out, 'timeout'
    except OSError:
        return out, 'reset'
    return out, 'timeout'


def statuses(data):
    return [l.split(b' ')[1].decode() for l in data.split(b'\r\n')
            if l.startswith(b'HTTP/1.')]


def short(method, path, clen, body, how):
    s = conn()
    s.sendall(head(method, path, int(clen)) + open(body, 'rb').read())
    if how == 'close':
        s.close()
        print('closed=1')
        return
    t0 = time.monotonic()
    data, end = read_all(s, 30)
    print('end=%s' % end)
    print('seconds=%d' % round(time.monotonic() - t0))
    print('statuses=%s' % ','.join(statuses(data)))


def long(method, path, clen, body):
    s = conn()
    s.sendall(head(method, path, int(clen)) + open(body, 'rb').read())
    data, end = read_all(s, 10)
    print('end=%s' % end)
    print('statuses=%s' % ','.join(statuses(data)))
    i = data.find(b'\r\n\r\n')
    print('first_body=%s' % data[i + 4:].split(b'HTTP/1.')[0].decode('utf8', 'replace')
          .replace('\n', ' '))


def slow(n, maxsecs, part, path='/v1/blobs/' + '0' * 64):
    """N connections each sending one byte a second: when does each end?"""
    if part == 'header':
        msg = ('GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Pad: %s\r\n\r\n'
               % ('a' * 200)).encode()
        pre = b''
    else:
        msg = b'x' * 1000
        pre = head('PUT', path, len(msg))
    socks = []
    for _ in range(n):
        s = conn()
        s.sendall(pre)
        s.setblocking(False)
        socks.append([s, None, b''])
    t0 = time.monotonic()
    i = 0
    while time.monotonic() - t0 < maxsecs and any(x[1] is None for x in socks):
        for x in socks:
            if x[1] is not None:
                continue
            try:
                b = x[0].recv(65536)
                if not b:
                    x[1] = time.monotonic() - t0
                    continue
                x[2] += b
            except BlockingIOError:
                pass
            except OSError:
                x[1] = time.monotonic() - t0
                continue
            if i < len(msg):
                try:
                    x[0].send(msg[i:i + 1])
                except OSError:
                    x[1] = time.monotonic() - t0
        i += 1
        time.sleep(1)
    ended = [x[1] for x in socks if x[1] is not None]
    print('ended=%d' % len(ended))
    print('max_seconds=%d' % (round(max(ended)) if ended else -1))
    print('answered=%d' % sum(1 for x in socks if x[2]))
    for x in socks:
        x[0].close()


def flood(n, hold):
    """N idle connections held open for HOLDSECS, then closed."""
    socks = [conn() for _ in range(int(n))]
    print('opened=%d' % len(socks), flush=True)
    time.sleep(float(hold))
    for s in socks:
        s.close()


def main():
    mode, args = sys.argv[2], sys.argv[3:]
    if mode == 'short':
        short(*args)
    elif mode == 'long':
        long(*args)
    elif mode == 'slow':
        slow(int(args[0]), float(args[1]), *args[2:])
    elif mode == 'flood':
        flood(*args)
    else:
        sys.exit('unknown mode ' + mode)


if __name__ == '__main__':
    main()
