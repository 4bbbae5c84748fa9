"""Start the site: every annotated paper under papers/

    python app.py                 # production server (waitress) on http://127.0.0.1:8000
    python app.py --dev           # Flask's reloading server for authors; content re-read on change

One process serves everything: the live-scoring model is loaded once, in that process, and
waitress's threads share it through the scoring queue.
"""
from __future__ import annotations

import argparse
import os


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--threads", type=int, default=None, help="waitress threads (default: SERVER_THREADS)")
    parser.add_argument("--dev", action="store_true", help="development server with reloading")
    args = parser.parse_args()

    from engine import create_app

    if args.dev:
        app = create_app({"CONTENT_RELOAD": True})
        app.run(host=args.host, port=args.port, debug=True)
        return

    import waitress

    app = create_app()
    threads = args.threads or app.config["SERVER_THREADS"]
    if threads <= app.config["SCORER_QUEUE_SIZE"] + 2:
        parser.error(f"--threads must exceed SCORER_QUEUE_SIZE + 2 ({app.config['SCORER_QUEUE_SIZE'] + 2}) "
                     "so pages still get a thread while scoring requests wait")
    print(f"Serving on http://{args.host}:{args.port}/ with {threads} threads", flush=True)
    waitress.serve(app, host=args.host, port=args.port, threads=threads, ident="annotated-papers")


if __name__ == "__main__":
    main()
