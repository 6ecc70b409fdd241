#!/usr/bin/env python3
"""Minimal seislive subscriber in Python (pyzmq + numpy): prints every image and event
that a running seislive publishes and saves the latest image as a NumPy file.

    python3 tools/subscribe.py tcp://127.0.0.1:5556 [--count N] [--save latest.npy]
"""
import argparse
import json

import numpy as np
import zmq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoint")
    ap.add_argument("--count", type=int, default=0, help="exit after N images (0 = never)")
    ap.add_argument("--save", default="latest.npy", help="where the latest image goes")
    args = ap.parse_args()

    sock = zmq.Context.instance().socket(zmq.SUB)
    sock.connect(args.endpoint)
    for topic in (b"image", b"event", b"status"):
        sock.setsockopt(zmq.SUBSCRIBE, topic)

    images, last_seq = 0, None
    while True:
        frames = sock.recv_multipart()          # [topic, JSON header, payload...]
        topic, header = frames[0].decode(), json.loads(frames[1])
        seq = header["seq"]                     # +1 per message over all topics
        if last_seq is not None and seq > last_seq + 1:
            print(f"missed {seq - last_seq - 1} messages")
        last_seq = max(seq, last_seq or 0)
        if topic == "image":
            nx, ny, nz = header["n"]
            if header.get("slices"):            # three planes: xy, xz, yz
                xy = np.frombuffer(frames[2], "<f4").reshape(ny, nx)
                print(f"image {seq}: slices, {header['shots']} shots, |xy| max {abs(xy).max():.3g}")
            else:                               # x fastest, then y, z slowest
                vol = np.frombuffer(frames[2], "<f4").reshape(nz, ny, nx)
                dz = header["d"][2]
                depth = header["o"][2] + dz * np.argmax(np.abs(vol).sum(axis=(1, 2)))
                print(f"image {seq}: {header['shots']} shots, {nx}x{ny}x{nz}, "
                      f"strongest depth {depth:.0f} m{' (final)' if header['final'] else ''}")
                np.save(args.save, vol)
            images += 1
            if header["final"] or (args.count and images >= args.count):
                break
        elif topic == "event":
            x, y, z = header.get("xyz") or header["x"]
            strength = header.get("strength", header.get("coalescence"))
            t = np.datetime64(header["origin_ns"], "ns")
            print(f"event {t}Z at x={x:.0f} y={y:.0f} z={z:.0f} m, strength {strength:.3g}")
        elif topic == "status":
            print(f"status: {header['units']} units, {header['rate']:.2f}/s, "
                  f"latency {header['latency_ms']:.0f} ms, {header['health']}")


if __name__ == "__main__":
    main()
