"""llama.cpp's OpenAI-compatible server as a process, from the ``xllamacpp`` wheel (which ships no
``llama-server`` binary)::

    python -m wobble.backends.llamacpp_serve -m model.gguf --host 127.0.0.1 --port 8080 --alias NAME \\
        -t 4 -np 4 -c 4096

The options are ``llama-server``'s, so a model's ``server:`` command can name either. The GGUF's own chat
template renders chat requests (``--jinja``, always on). The server runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def server_params(gguf: str | os.PathLike, *, alias: str, host: str, port: int, threads: int, slots: int,
                  n_ctx: int, gpu_layers: int = 0, verbosity: int = 0):
    """The ``xllamacpp.CommonParams`` of a server on ``gguf``: ``slots`` sequences decoded in parallel with
    ``n_ctx`` tokens of context each, ``threads`` CPU threads, the GGUF's chat template."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = os.fspath(gguf)
    params.model_alias = {alias}  # a set of names in this binding (a plain string would be read as its letters)
    params.hostnames = [host]
    params.port = int(port)
    params.use_jinja = True  # the GGUF's own chat template
    params.verbosity = verbosity  # llama.cpp's per-request info lines flood a log above 0
    params.n_parallel = int(slots)
    params.n_ctx = int(n_ctx) * int(slots)  # the context is shared by the slots
    params.n_gpu_layers = int(gpu_layers)
    params.cpuparams.n_threads = int(threads)
    params.cpuparams_batch.n_threads = int(threads)
    return params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wobble.backends.llamacpp_serve", description=__doc__.split("\n")[0])
    ap.add_argument("-m", "--model", required=True, help="the GGUF file")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("-a", "--alias", help="the served model name (default: the GGUF's file name)")
    ap.add_argument("-t", "--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-np", "--parallel", type=int, default=4, help="sequences decoded in parallel")
    ap.add_argument("-c", "--ctx-size", type=int, default=4096, help="context per sequence")
    ap.add_argument("-ngl", "--n-gpu-layers", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="llama.cpp's info lines, one per request")
    ap.add_argument("--jinja", action="store_true", help="accepted for llama-server's command lines; always on")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.model):
        print(f"llamacpp_serve: no GGUF file at {args.model}", file=sys.stderr)
        return 2
    import xllamacpp as xlc

    stop = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)  # llama.cpp's threads inherit the mask; sigwait takes them
    alias = args.alias or os.path.basename(args.model)
    params = server_params(args.model, alias=alias, host=args.host,
                           port=args.port, threads=args.threads, slots=args.parallel, n_ctx=args.ctx_size,
                           gpu_layers=args.n_gpu_layers, verbosity=1 if args.verbose else 0)
    server = xlc.Server(params)
    print(f"llamacpp_serve: {args.model} as {alias!r} on {server.listening_address} "
          f"(xllamacpp {xlc.__version__}, {args.threads} threads, {args.parallel} slots)", flush=True)
    got = signal.sigwait(stop)
    print(f"llamacpp_serve: {signal.Signals(got).name}, stopping", flush=True)
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
