"""`tutorials-site serve`: the built site on 127.0.0.1, built again whenever an input is saved, and the browser reloaded.

sphinx-autobuild's pieces do the serving: its RebuildServer watches the inputs (watchfiles) and, after each
rebuild, tells every open page through a websocket to reload; its middleware adds that script to each HTML
page; Starlette's StaticFiles serves BUILDDIR/html under uvicorn. Its own command runs a single sphinx-build,
whereas a build here is `python -m tutorials_site html` (the stale tutorials executed, then every language
rendered): that is what each change runs, with the make variables serve was given (TUTORIALS, LANGUAGES...),
so only what changed is executed again (the runs' stamps decide) and rendered again. A save is built in the
language it was made in first (a catalog's language, else the sources'), the open pages reloaded, then in the
others: the author sees the page they edit in seconds.
"""

import contextlib
import errno
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import assets, project, site_tree
from ..core.errors import Failed, UsageError
from ..core.files import shown
from ..core.site.settings import Settings
from .prepare import staging_skip

HOST = "127.0.0.1"  # the author's own machine only: a preview is nobody else's to reach
DEFAULT_PORT = 8000


def port_of(environ: Mapping[str, str]) -> int:
    """PORT, DEFAULT_PORT where it is not given; UsageError where it is no port number."""
    value = environ.get("PORT", "").strip() or str(DEFAULT_PORT)
    if not re.fullmatch(r"[0-9]{1,5}", value) or not 0 < int(value) < 65536:
        raise UsageError(f"PORT: {value!r} is not a port number (1 to 65535; for example PORT=8001)")
    return int(value)


def watched(site: project.Project, skip: Sequence[Path] = ()) -> list[Path]:
    """What a build of SITE reads: the whole site (core.site_tree; SKIP: the folders builds make), its catalogs and
    the engine's own files (core.assets). A save to any of them rebuilds."""
    catalogs = [p for p in [site.locales] if p.exists()]
    return [site.root / site_tree.CONF, *site_tree.entries(site.root, skip), *catalogs, *assets.FOLDERS]


def is_input(path: str | Path) -> bool:
    """Whether a changed path is a file a build reads (not __pycache__, an editor's swap or backup file)."""
    path = Path(path)
    return "__pycache__" not in path.parts and not site_tree.NOT_INPUTS.search(path.name)


@dataclass(frozen=True)
class Rebuild:
    """The build, run again by sphinx-autobuild's watcher after each batch of saves (in a process of its own)."""

    root: Path  # the project's
    builddir: Path
    url: str  # where the build is served, which its last line gives

    languages: tuple[str, ...] = ()  # LANGUAGES serve was given (none: all of the site's)

    def __call__(self, changed_paths: Sequence[Path] = (), languages: Sequence[str] = ()) -> None:
        """Build the site again (in LANGUAGES, else serve's), after naming the saves that call for it
        (CHANGED_PATHS)."""
        if changed_paths:
            names = ", ".join(sorted({shown(path) for path in changed_paths}))
            print(f"[serve] changed: {names}; building" + (f" {' '.join(languages)} first" if languages else ""),
                  flush=True)
        chosen = " ".join(languages or self.languages)
        done = subprocess.run([sys.executable, "-m", "tutorials_site", "html", "--builddir", str(self.builddir),
                               "--served-at", self.url], cwd=self.root,
                              env={**os.environ, "LANGUAGES": chosen} if chosen else None)
        if done.returncode:
            print("[serve] the build failed (above): fix it and save again; the pages reload after each build",
                  flush=True)
        else:
            print("[serve] built; the open pages reload", flush=True)


def own_outputs() -> frozenset[Path]:
    """The files this process's standard output and error go to (`tutorials-site serve > serve.log` in the project): a build
    writes there, which is no save, and watched it would rebuild without end."""
    found = set()
    for fd in (1, 2):
        target = Path(f"/proc/self/fd/{fd}")
        with contextlib.suppress(OSError):
            if target.resolve().is_file():
                found.add(target.resolve())
    return frozenset(found)


class LocalOnly:
    """ASGI middleware: only requests for this server by its own names (Host 127.0.0.1:PORT or localhost:PORT),
    and on the reload websocket only pages it served (Origin the same): a page of another site, or a name that
    resolves to 127.0.0.1 (DNS rebinding), reaches nothing."""

    def __init__(self, app: Any, port: int) -> None:
        self.app, self.hosts = app, {f"{HOST}:{port}", f"localhost:{port}"}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Refuse a request of another Host, a websocket of another Origin (403, or the websocket closed)."""
        if scope["type"] in ("http", "websocket"):
            headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers", [])}
            origin = headers.get("origin")
            allowed = headers.get("host") in self.hosts and (
                scope["type"] == "http" or (origin is not None and origin.removeprefix("http://") in self.hosts))
            if not allowed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await send({"type": "http.response.start", "status": 403,
                                "headers": [(b"content-type", b"text/plain")]})
                    await send({"type": "http.response.body", "body": b"this server answers 127.0.0.1 only\n"})
                return
        await self.app(scope, receive, send)


def first_languages(site: project.Project, changed: Sequence[Path], languages: Sequence[str]) -> tuple[str, ...]:
    """The URL segments of the languages a batch of saves (CHANGED) is seen in first: a catalog's language, else
    the site's sources' (a tutorial, a page, conf.py); none where that is all of LANGUAGES (serve's) anyway."""
    segs = set()
    for path in changed:
        lang = next((lang for lang in site.languages.all if Path(path).is_relative_to(site.locales / lang.code)), None)
        segs.add((lang or site.languages.source).seg)
    first = tuple(lang.seg for lang in site.languages.all if lang.seg in segs and (not languages or lang.seg in languages))
    return first if set(first) != set(languages or (lang.seg for lang in site.languages.all)) else ()


class LanguagesFirst:
    """sphinx-autobuild's RebuildServer, whose watch loop builds each batch of saves in the languages it is seen
    in first (first_languages), reloads the open pages, then builds the rest and reloads them again.

    Its watch loop is its own (RebuildServer.watch: watchfiles.awatch over its paths, the build in a process pool,
    then `flag`, which each open page's websocket waits on); only the loop is replaced.
    """

    def __new__(cls, site: project.Project, rebuild: Rebuild, paths: list[Path],
                ignore: Callable[[str], bool]) -> Any:
        """The server of SITE watching PATHS (but what IGNORE says), building with REBUILD."""
        import asyncio
        from concurrent.futures import ProcessPoolExecutor

        import watchfiles
        from sphinx_autobuild.server import RebuildServer

        class Server(RebuildServer):  # type: ignore[misc]
            async def watch(self) -> None:
                async for changes in watchfiles.awatch(*self.paths, watch_filter=lambda _, path: not self.ignore(path)):
                    changed = [Path(path).resolve() for _, path in changes]
                    first = first_languages(site, changed, rebuild.languages)
                    for languages in ([first, ()] if first else [()]):
                        with ProcessPoolExecutor() as pool:
                            await asyncio.wrap_future(pool.submit(rebuild, changed, languages))
                        self.flag.set()
                        changed = []

        return Server(paths, ignore, change_callback=rebuild)


def _refuse_taken(port: int) -> None:
    """Say so now, in one line, when the port is taken (uvicorn would after the first build, in a traceback)."""
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            raise UsageError(f"PORT={port}: {HOST}:{port} is in use (another `tutorials-site serve`?); "
                             f"give another port, for example PORT={port + 1 if port < 65535 else 8001}") from None


def serve(site: project.Project, settings: Settings, environ: Mapping[str, str]) -> None:
    """Build once, then serve BUILDDIR/html on 127.0.0.1:PORT until interrupted, rebuilding on each save."""
    try:
        import uvicorn
        from sphinx_autobuild.middleware import JavascriptInjectorMiddleware
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.routing import Mount, WebSocketRoute
        from starlette.staticfiles import StaticFiles
    except ImportError as error:
        raise Failed(f"serve: {error.name} is not installed: it comes with tutorials-site (sphinx-autobuild's "
                     "dependencies); install the engine again in this environment") from None
    port = port_of(environ)
    _refuse_taken(port)
    rebuild = Rebuild(site.root, settings.tree.root, f"http://{HOST}:{port}/",
                      tuple(environ.get("LANGUAGES", "").split()))
    rebuild()  # the first build, before anything is served
    htmldir = settings.tree.html
    htmldir.mkdir(parents=True, exist_ok=True)  # where even the first build failed early: served empty
    outputs = own_outputs()
    watcher = LanguagesFirst(site, rebuild, watched(site, staging_skip(settings)),
                             lambda path: not is_input(path) or Path(path).resolve() in outputs)
    app = Starlette(
        routes=[WebSocketRoute("/websocket-reload", watcher, name="reload"),
                Mount("/", app=StaticFiles(directory=htmldir, html=True), name="static")],
        middleware=[Middleware(LocalOnly, port=port), Middleware(JavascriptInjectorMiddleware, ws_url=f"{HOST}:{port}")],
        lifespan=watcher.lifespan,
    )
    print(f"[serve] http://{HOST}:{port}/ serves {htmldir}; saving a tutorial, catalog, template, static file "
          "or conf.py rebuilds it (Ctrl-C stops)", flush=True)
    uvicorn.run(app, host=HOST, port=port, log_level="warning")
