"""``--help`` in the user's language: a translated copy of the Typer app, made before Typer builds its Click
commands, from the gettext catalog ``help`` (drill.text.catalogs). Only a start that shows help comes here."""

import functools
import inspect
from typing import Annotated, Optional

import typer
from typer.core import TyperCommand, TyperGroup


class Template(str):
    """A help text filled in from a template: the help catalog translates the template, then fills it in the same way."""

    def __new__(cls, template: str, **values: str) -> "Template":
        text = super().__new__(cls, template.format(**values))
        text.template, text.values = template, values
        return text



# Typer's and Click's own words on a help screen; the catalog translates them with drill's texts.
TYPER_WORDS = ("Usage: ", "[OPTIONS]", "COMMAND [ARGS]...", "Arguments", "Options", "Commands", "[default: {}]", "[required]",
               "Show this message and exit.", "Install completion for the current shell.",
               "Show completion for the current shell, to copy it or customize the installation.")  # fmt: skip


def help_request(argv: list[str], groups: set[str]) -> Optional[tuple[str, list[str]]]:
    """For a start that shows help (``--help``/``-h``, or a bare group), its language and ``argv`` without ``--lang``
    (help is shown whatever the command accepts); None for any other start, which then pays nothing for this."""
    flagged = any(arg in ("-h", "--help") for arg in argv)
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and not (i and argv[i - 1] == "--lang")]
    if not flagged and not (len(words) == 1 and words[0] in groups):
        return None
    from drill.config import resolve
    from drill.text.lang import LANGS

    given, rest = split_lang(argv)
    return resolve(given if given in LANGS else None), rest


def split_lang(argv: list[str]) -> tuple[Optional[str], list[str]]:
    """The value of ``--lang X``/``--lang=X`` (the last one given) and ``argv`` without it: every command accepts it."""
    given, rest, skip = None, [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--lang":
            given, skip = argv[i + 1] if i + 1 < len(argv) else "", True
        elif arg.startswith("--lang="):
            given = arg.partition("=")[2]
        else:
            rest.append(arg)
    return given, rest


def in_language(group: typer.Typer, lang: str) -> typer.Typer:
    """``group`` with its help in ``lang`` from the ``help`` catalog (English has no catalog: its msgids)."""
    from drill.text.catalogs import translations
    from drill.views import cjk_wrap

    cjk_wrap.install()  # Chinese help wraps between characters, as every view's does (English: at spaces, as before)
    catalog = translations("help", lang)
    return help_in(group, lambda text: catalog.gettext(text))


def help_in(group: typer.Typer, translate) -> typer.Typer:
    """A copy of ``group`` whose every help text went through ``translate`` (the English msgid to its translation),
    made before Typer builds the Click commands: their parameters are read from each command's signature."""
    import copy

    words = {word: translate(word) for word in TYPER_WORDS}
    command_cls, group_cls = _help_classes(words)

    def text(value):
        if isinstance(value, Template):
            return translate(value.template).format(**value.values)
        return translate(value) if isinstance(value, str) else value  # a DefaultPlaceholder or None stays

    def walk(typer_app: typer.Typer) -> typer.Typer:
        kept = copy.copy(typer_app)
        kept.info = copy.copy(typer_app.info)
        kept.info.help, kept.info.cls = text(typer_app.info.help), group_cls
        if typer_app.registered_callback:
            kept.registered_callback = copy.copy(typer_app.registered_callback)
            kept.registered_callback.callback = _with_help(typer_app.registered_callback.callback, text)
        kept.registered_commands = []
        for info in typer_app.registered_commands:
            info = copy.copy(info)
            info.help, info.short_help, info.epilog = text(inspect.getdoc(info.callback)), text(info.short_help), text(info.epilog)
            info.cls, info.callback = command_cls, _with_help(info.callback, text)
            kept.registered_commands.append(info)
        kept.registered_groups = []
        for info in typer_app.registered_groups:
            info = copy.copy(info)
            info.typer_instance = walk(info.typer_instance)
            kept.registered_groups.append(info)
        return kept

    return walk(group)


def _with_help(fn, text):
    """``fn`` under a signature whose typer.Option/typer.Argument helps went through ``text``."""
    from typing import get_args, get_origin

    from typer.models import ParameterInfo

    def swapped(annotation):
        if get_origin(annotation) is not Annotated:
            return annotation
        base, *extras = get_args(annotation)
        extras = [copy_with_help(e) if isinstance(e, ParameterInfo) else e for e in extras]
        return Annotated[(base, *extras)]

    def copy_with_help(info):
        import copy

        info = copy.copy(info)
        info.help = text(info.help)
        return info

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return fn(*args, **kwargs)

    signature = inspect.signature(fn)
    run.__signature__ = signature.replace(parameters=[p.replace(annotation=swapped(p.annotation)) for p in signature.parameters.values()])
    return run


def _help_classes(words: dict[str, str]) -> tuple[type, type]:
    """Click command classes that print Typer's and Click's own words as ``words`` says: the usage line, the help and
    completion options' help; the root's ``main`` swaps in the panel titles and default/required marks meanwhile."""
    from contextlib import contextmanager

    from typer import rich_utils

    @contextmanager
    def rich_words():
        names = {"ARGUMENTS_PANEL_TITLE": "Arguments", "OPTIONS_PANEL_TITLE": "Options", "COMMANDS_PANEL_TITLE": "Commands",
                 "DEFAULT_STRING": "[default: {}]", "REQUIRED_LONG_STRING": "[required]"}  # fmt: skip
        saved = {name: getattr(rich_utils, name) for name in names}
        try:
            for name, word in names.items():
                setattr(rich_utils, name, words[word])
            yield
        finally:
            for name, value in saved.items():
                setattr(rich_utils, name, value)

    class Words:
        def format_usage(self, ctx, formatter) -> None:
            pieces = [words.get(piece, piece) for piece in self.collect_usage_pieces(ctx)]  # [OPTIONS], COMMAND [ARGS]...
            formatter.write_usage(ctx.command_path, " ".join(pieces), prefix=words["Usage: "])

        def get_params(self, ctx):
            params = super().get_params(ctx)
            for param in params:
                param.help = words.get(param.help, param.help)
            return params

        def main(self, *args, **kwargs):
            with rich_words():
                return super().main(*args, **kwargs)

    return type("Command", (Words, TyperCommand), {}), type("Group", (Words, TyperGroup), {})
