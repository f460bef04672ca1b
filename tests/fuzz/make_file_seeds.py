#!/usr/bin/env python3
"""Writes the fuzz seeds that reach the reader through the file level (see the mode byte
in fuzz_reader.cc): gzip members whole, cut and damaged, streams, files cut while mapped,
and texts in encodings flopline does not read. Run from this folder; the output is
committed under seeds/."""
import gzip
import os



def events(n):
    return b'[' + b','.join(
        b'{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":1.5,"args":{"flops":1e9}}'
        % (i, 10 * i) for i in range(n)) + b']'


EVENTS = events(40)
MEMORY, FILE, PIPE, CUT = 0, 2, 4, 6


def seed(name, mode, body):
    with open(os.path.join("seeds", name), "wb") as f:
        f.write(bytes([mode]) + body)


def main():
    gz = gzip.compress(EVENTS, mtime=0)
    seed("gzip_file.bin", FILE, gz)
    seed("gzip_cut.bin", FILE, gz[: len(gz) // 2])
    seed("gzip_two_members.bin", FILE, gzip.compress(EVENTS[:200], mtime=0) + gzip.compress(EVENTS[200:], mtime=0))
    seed("gzip_bad_second_member.bin", FILE, gz + b"\x1f\x8b\x08\x00garbage")
    seed("gzip_twice.bin", FILE, gzip.compress(gz, mtime=0))
    seed("gzip_stream.bin", PIPE, gz)
    seed("plain_stream.bin", PIPE, EVENTS)
    seed("cut_while_mapped.bin", CUT | (12 << 3), events(800))  # several pages, cut at 12/32
    seed("syntax_error_mid.bin", MEMORY, EVENTS.replace(b'"ts":20,', b'"ts":0x10,'))
    seed("zstd.bin", FILE, b"\x28\xb5\x2f\xfd" + EVENTS[:40])
    seed("utf16.bin", MEMORY, b"\xff\xfe" + EVENTS[:200].decode().encode("utf-16-le"))
    seed("dur_out_of_range.bin", MEMORY,
         b'[{"ph":"X","ts":1,"dur":1e18,"name":"a"},{"ph":"X","ts":-9e15,"dur":1,"name":"b"},'
         b'{"ph":"B","ts":-9e15,"pid":1,"tid":1},{"ph":"E","ts":9e15,"pid":1,"tid":1}]')


if __name__ == "__main__":
    main()
