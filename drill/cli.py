"""The command line: parse options, call the library, render with rich.

Every command is a thin wrapper registered with :func:`command`, which gives it a
one-line help with an example and maps :class:`~drill.errors.DrillError` to an exit
code. Heavy modules (torch, prompt_toolkit) are imported inside the commands that
need them so that ``drill bank list`` starts fast.
"""

import functools
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

from drill import completion
from drill.cli_help import Template, help_request, in_language, split_lang
from drill.version import __version__
from drill.errors import DrillError, ExitCode
from drill.text.messages import Msg, translated


class _Root(TyperGroup):
    """drill's root group: run as ``app`` (``CliRunner().invoke(app, ...)``), a help request goes where ``main`` sends it."""

    def main(self, args=None, *rest, **kwargs):
        argv = list(sys.argv[1:] if args is None else args)
        asked = help_request(argv, _group_names())
        if asked is None:
            _state["lang_option"], argv = split_lang(argv)  # every command takes --lang: the language of its screens and errors
            return super().main(argv, *rest, **kwargs)
        lang, argv = asked
        return typer.main.get_command(in_language(pruned(app, argv), lang)).main(argv, *rest, **kwargs)


app = typer.Typer(
    name="drill",
    cls=_Root,
    help="Practice for LLM / Transformer interviews: timed quizzes, a whiteboard grader for attention code, streaks.",
    no_args_is_help=False,  # bare `drill` shows today's plan; --help keeps the full help
    add_completion=True,  # --install-completion / --show-completion; the name lists live in drill.completion
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
bank_app = typer.Typer(help="Inspect and validate question banks. Example: drill bank list --level L2", no_args_is_help=True)
app.add_typer(bank_app, name="bank")
history_app = typer.Typer(help="Move your practice history between machines. Example: drill history export history.json", no_args_is_help=True)
app.add_typer(history_app, name="history")
export_app = typer.Typer(help="Export the question bank for Anki or print. Example: drill export anki drill.apkg", no_args_is_help=True)
app.add_typer(export_app, name="export")

_state = {"debug": False}


def _fail(exc: DrillError) -> None:
    from rich.markup import escape

    from drill.views.console import err

    lang = _error_lang()
    prefix, lines = translated(Msg("error: "), lang), [translated(line, lang) for line in exc.lines]
    for line in lines:  # messages quote user input and bank text: never markup
        err.print(f"[red]{escape(prefix)}[/]{escape(line)}" if len(lines) == 1 else line, markup=len(lines) == 1)
    raise typer.Exit(int(exc.exit_code))


def _error_lang() -> str:
    """The language of an error: the command's once resolved, else --lang, the config or the locale (English if unreadable)."""
    from drill.text.lang import LANGS, locale_lang

    if _state.get("lang"):
        return _state["lang"]
    if _state.get("lang_option") in LANGS:
        return _state["lang_option"]
    try:
        from drill.config import resolve

        return resolve(None)
    except DrillError:  # DRILL_HOME unusable: the error says so, in the locale's language
        return locale_lang()


def command(group: typer.Typer, name: str, *, example: str):
    """Register ``fn`` as ``name`` on ``group``, with a one-line summary, an example and domain-error mapping."""

    def decorate(fn):
        summary = (fn.__doc__ or "").strip().splitlines()[0]

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            _state["lang"] = None  # set by resolve_lang; an error before it speaks the language _error_lang finds
            try:
                if _state.get("lang_option") is not None:
                    resolve_lang(None)  # a bad --lang is refused by every command, not only those with screens in it
                return fn(*args, **kwargs)
            except DrillError as exc:
                if _state["debug"]:
                    raise
                _fail(exc)

        # The example goes in the command's own help, on a line of its own: in the command list it would wrap mid-command.
        return group.command(name, short_help=summary, epilog=Template("Example: {example}", example=example))(guarded)

    return decorate


def split_values(values: Optional[list[str]]) -> list[str]:
    """Accept both ``--level L1 --level L2`` and ``--level L1,L2``."""
    return [v.strip() for raw in values or [] for v in raw.split(",") if v.strip()]


def _checked(values: list[str], allowed: tuple[str, ...], option: str) -> list[str]:
    for value in values:
        if value not in allowed:
            raise DrillError("{option}: {value!r} is not one of {allowed}", option=option, value=value, allowed=", ".join(allowed))
    return values


def _levels(values: Optional[list[str]]) -> list[str]:
    from drill.bank.schema import LEVELS

    return _checked(split_values(values), LEVELS, "--level")


BankOpt = Annotated[Optional[list[Path]], typer.Option("--bank", help="Extra bank file or folder (repeatable); also $DRILL_BANKS.")]
LevelOpt = Annotated[Optional[list[str]], typer.Option("--level", "-l", help="L1, L2 or L3 (repeatable or comma list).")]
TopicOpt = Annotated[
    Optional[list[str]],
    typer.Option("--topic", "-t", autocompletion=completion.topics,
                 help=Template("Topic (repeatable or comma list): {topics}.", topics=", ".join(completion.bundled_topics()))),
]  # fmt: skip
LangOpt = Annotated[Optional[str], typer.Option("--lang", help="Content language: en or zh (default: config, then locale).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def resolve_lang(lang: Optional[str]) -> str:
    from drill.config import resolve
    from drill.text.lang import LANGS

    lang = lang if lang is not None else _state.get("lang_option")  # --lang is taken out of argv before the command runs
    if lang is not None and lang not in LANGS:
        raise DrillError("--lang: {lang!r} is not one of {langs}", lang=lang, langs=", ".join(LANGS))  # one line, like every usage error
    _state["lang"] = resolve(lang)
    return _state["lang"]


def _version(value: bool) -> None:
    if value:
        print(f"drill {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _main(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for errors.")] = False,
    lang: Annotated[Optional[str], typer.Option("--lang", help="Language of every screen: en or zh, before or after the command (default: config, then locale).")] = None,
) -> None:
    """With no command: today's plan (streak, goal, what is due, what to run next)."""
    _state["debug"] = debug  # --lang never gets here: _Root.main took it out of argv (the option stays for the help)
    if ctx.invoked_subcommand is None:
        today_cmd(lang=lang)


@command(app, "today", example="drill today --lang zh")
def today_cmd(lang: LangOpt = None, as_json: JsonOpt = False, bank: BankOpt = None) -> None:
    """Today's plan: streak, goal, due reviews, weakest topic and the one command to run next (also bare `drill`)."""
    from drill.practice import dashboard
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.views import dashboard_view
    from drill.whiteboard import catalog

    conn, known = store.connect(), set(load_bank(bank).questions)
    tasks = [(s.exercise.id, s.state) for s in catalog.statuses(conn)]
    dashboard_view.print_plan(dashboard.plan(conn, known, tasks), resolve_lang(lang), as_json)


# --- bank -------------------------------------------------------------------


@command(bank_app, "list", example="drill bank list --level L2 --topic masks")
def bank_list(level: LevelOpt = None, topic: TopicOpt = None, as_json: JsonOpt = False, bank: BankOpt = None) -> None:
    """List the questions of every loaded bank."""
    from drill.bank.load import load_bank
    from drill.views import bank_view

    loaded = load_bank(bank)
    questions = loaded.select(levels=_levels(level), topics=loaded.known_topics(split_values(topic)))
    bank_view.print_list(questions, as_json, "en" if as_json else resolve_lang(None))


@command(bank_app, "show", example="drill bank show attn-why-sqrt-dk --lang zh")
def bank_show(question_id: Annotated[str, typer.Argument(help="Question id.", autocompletion=completion.question_ids)], lang: LangOpt = None, bank: BankOpt = None) -> None:
    """Show one question with its answer, key points and follow-ups."""
    from drill.bank.load import load_bank
    from drill.views import bank_view

    bank_view.print_question(load_bank(bank).get(question_id), resolve_lang(lang))


@command(bank_app, "validate", example="drill bank validate my_bank/")
def bank_validate(paths: Annotated[list[Path], typer.Argument(help="Bank files or folders.")]) -> None:
    """Check banks; print every problem as file:line: message."""
    from drill.bank.load import default_paths, load_paths
    from drill.views.console import out

    loaded = load_paths(default_paths(paths), use_cache=False, lint=True, linted=paths)
    out.print(translated(Msg("ok: {questions} questions in {files} files", questions=len(loaded.questions), files=len(loaded.files)), resolve_lang(None)))


@command(bank_app, "stats", example="drill bank stats --markdown > docs/bank-coverage.md")
def bank_stats(markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False, as_json: JsonOpt = False, bank: BankOpt = None) -> None:
    """Count questions by topic, level and type."""
    from drill.bank.load import load_bank
    from drill.bank.stats import coverage
    from drill.views import bank_view

    if markdown and as_json:
        raise DrillError("{first} and {second} go one at a time", first="--markdown", second="--json")
    bank_view.print_coverage(coverage(load_bank(bank)), markdown, as_json, resolve_lang(None))


# --- quiz, review, mock, config ---------------------------------------------

TypeOpt = Annotated[Optional[list[str]], typer.Option("--type", help="open, choice, numeric or shape (repeatable or comma list).")]
TimeOpt = Annotated[Optional[int], typer.Option("--time", min=1, help="Seconds per question (default: the question's time_limit, else 60/90/120 by level).")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Submit what was typed when time runs out (default: soft deadline, overtime is marked).")]
SeedOpt = Annotated[Optional[int], typer.Option("--seed", help="Seed for a reproducible selection.")]


@command(app, "quiz", example="drill quiz --level L2 --count 5")
def quiz_cmd(
    level: LevelOpt = None,
    topic: TopicOpt = None,
    qtype: TypeOpt = None,
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="Number of questions.")] = 10,
    seconds: TimeOpt = None,
    lang: LangOpt = None,
    reveal: Annotated[str, typer.Option("--reveal", help="Show answers after `each` question or at the `end`.")] = "each",
    strict: StrictOpt = False,
    seed: SeedOpt = None,
    fail_under: Annotated[Optional[float], typer.Option("--fail-under", min=0, max=100, metavar="SCORE", help="Exit 1 when the score is under SCORE percent (default: a completed quiz exits 0 whatever the score).")] = None,
    as_json: JsonOpt = False,
    bank: BankOpt = None,
    resume: Annotated[bool, typer.Option("--resume", help="Go on with the questions left of the last quiz, stopped with Ctrl-C.")] = False,
    wrong: Annotated[bool, typer.Option("--wrong", help="Redo the questions whose last answer was wrong (drill mistakes lists them).")] = False,
    ids: Annotated[Optional[list[str]], typer.Option("--id", autocompletion=completion.question_ids, help="Ask exactly this question (repeatable).")] = None,
) -> None:
    """A timed quiz: unseen and missed questions first; every answer is saved as you go."""
    from drill.practice import quiz
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.bank.schema import TYPES
    from drill.practice.play import play

    levels, types = _levels(level), _checked(split_values(qtype), TYPES, "--type")
    _checked([reveal], ("each", "end"), "--reveal")
    if resume + wrong + bool(ids) > 1:
        raise DrillError("--resume, --wrong and --id go one at a time")
    loaded, lang = load_bank(bank), resolve_lang(lang)
    topics = loaded.known_topics(split_values(topic))
    conn = store.connect()
    options = {"level": levels, "topic": topics, "type": types, "count": count, "time": seconds, "lang": lang, "reveal": reveal, "strict": strict, "seed": seed}
    settings = quiz.Settings(seconds, strict, reveal)
    if resume:
        interrupted, questions = quiz.resumed(conn, loaded, lang)
        stored = interrupted.options
        settings = quiz.Settings(seconds or stored.get("time"), bool(stored.get("strict")), stored.get("reveal") or "each")
        options = {**stored, "lang": lang, "resumes": interrupted.session_id}
    elif ids:
        questions = quiz.by_ids(loaded, split_values(ids))
    else:
        candidates = loaded.select(levels=levels, topics=topics, types=types)
        if not candidates:
            raise DrillError("no questions match the given --level/--topic/--type")
        questions = quiz.pick(conn, quiz.wrong_ones(conn, candidates, lang) if wrong else candidates, count, seed)
    options |= {"wrong": wrong, "id": [q.id for q in questions] if ids else None}
    raise typer.Exit(play(conn, questions, settings, lang=lang, as_json=as_json, kind="quiz", options=options, fail_under=fail_under))


@command(app, "review", example="drill review --limit 10")
def review_cmd(
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many questions.")] = 20,
    seconds: TimeOpt = None,
    lang: LangOpt = None,
    strict: StrictOpt = False,
    as_json: JsonOpt = False,
    tasks: Annotated[bool, typer.Option("--tasks", help="Review the most overdue whiteboard task instead (a timed whiteboard session).")] = False,
    optimize: Annotated[bool, typer.Option("--optimize", help="Fit FSRS's parameters to your own reviews (512 needed; needs the optimize extra: pip install 'llm-drill\\[optimize]').")] = False,
    bank: BankOpt = None,
) -> None:
    """Questions and whiteboard tasks due for spaced review (FSRS), most overdue first."""
    from datetime import datetime, timezone

    from drill.practice import dashboard, quiz, review, task_review
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.practice.play import play
    from drill.views import dashboard_view
    from drill.whiteboard import catalog

    if optimize:
        from drill.practice.optimize import optimize as fit
        from drill.views.optimize_view import print_fit

        print_fit(fit(store.connect()), resolve_lang(lang))
        return
    lang, loaded, conn = resolve_lang(lang), load_bank(bank), store.connect()
    task_ids = set(catalog.load())
    due_tasks = task_review.due(conn, task_ids)
    if tasks:
        if not due_tasks:
            dashboard_view.print_nothing_due(task_review.next_due(conn, task_ids), lang, as_json, tasks=True)
            return
        whiteboard_cmd(task=due_tasks[0], file=None, minutes=WHITEBOARD_MINUTES, editor=False, record=False, lang=lang)
        return
    due = review.due_now(conn, set(loaded.questions))
    if not as_json:
        dashboard_view.print_forecast(*dashboard.forecasts(conn, set(loaded.questions), task_ids), lang)
    if not due:
        upcoming = dashboard.next_due(dashboard.due_dates(conn, set(loaded.questions)), datetime.now(timezone.utc))
        dashboard_view.print_nothing_due(upcoming, lang, as_json, due_tasks=due_tasks)
        return
    if due_tasks and not as_json:
        dashboard_view.print_tasks_due(due_tasks, lang)
    questions = [loaded.questions[qid] for qid in due[:limit]]
    options = {"limit": limit, "time": seconds, "lang": lang, "strict": strict}
    raise typer.Exit(play(conn, questions, quiz.Settings(seconds, strict), lang=lang, as_json=as_json, kind="review", options=options))


@command(app, "mock", example="drill mock --topic attention-core --minutes 20")
def mock_cmd(
    pitch_topic: Annotated[Optional[str], typer.Argument(metavar="[TOPIC]", help="Topic (same as --topic), e.g. with --pitch.", autocompletion=completion.topics)] = None,
    topic: TopicOpt = None,
    minutes: Annotated[Optional[int], typer.Option("--minutes", min=1, help="Length of the interview (default 20; 45 with --full).")] = None,
    pitch: Annotated[bool, typer.Option("--pitch", help="Give the 60-second answer of a topic instead.")] = False,
    full: Annotated[bool, typer.Option("--full", help="A whole interview under one clock: a pitch, concepts with follow-ups, a whiteboard task graded live, a scorecard.")] = False,
    track: Annotated[Optional[str], typer.Option("--track", help="With --full: the whiteboard track (attention, positions, inference, training, ...); the concepts follow the task's topic unless --topic.")] = None,
    lang: LangOpt = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    bank: BankOpt = None,
) -> None:
    """A mock interview: an L1 question, then its follow-ups deeper, until the chain or the time ends."""
    import time

    from drill.practice import mock, quiz
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.practice.play import play

    lang, loaded = resolve_lang(lang), load_bank(bank)
    topics = loaded.known_topics(split_values(topic) + ([pitch_topic] if pitch_topic else []))
    if full:
        _full_interview(loaded, topics, track, minutes or FULL_MOCK_MINUTES, seed, lang, as_json)
        return
    if track is not None:
        raise DrillError("--track goes with --full (drill mock --full --track attention)")
    minutes = minutes or 20
    options = {"topic": topics, "minutes": minutes, "pitch": pitch, "lang": lang, "seed": seed}
    if pitch:
        questions, settings, stop_at = [mock.pitch(loaded, topics, seed)], quiz.Settings(time=mock.PITCH_SECONDS), None
    else:
        questions, settings, stop_at = mock.chain(loaded, topics, seed), quiz.Settings(), time.monotonic() + 60 * minutes
    kind = "pitch" if pitch else "mock"
    raise typer.Exit(play(store.connect(), questions, settings, lang=lang, as_json=as_json, kind=kind, options=options, stop_at=stop_at))


FULL_MOCK_MINUTES = 45


def _full_interview(loaded, topics: list[str], track: Optional[str], minutes: int, seed: Optional[int], lang: str, as_json: bool) -> None:
    _require_torch()
    from drill.practice import interview, mock
    from drill.history import store
    from drill.grade.tasks import TASKS
    from drill.views import interview_view
    from drill.whiteboard import catalog, solutions

    conn = store.connect()
    exercise = mock.interview_task(catalog.statuses(conn), TASKS, track)
    if not topics:
        question = solutions.handwrite_question(exercise, loaded)
        topics = [question.topic] if question else []
    pitch, concepts = mock.interview_questions(loaded, topics, seed)
    plan = interview.Plan(pitch, concepts, exercise, Path(f"drill_{exercise.id}.py"), topics, minutes)
    interview_view.plan(minutes, len(concepts), exercise.id, lang)
    card = interview.play(conn, plan, loaded, lang=lang)
    session_id = interview.save(conn, card, {"track": track, "topic": topics, "task": exercise.id, "lang": lang, "seed": seed})
    interview_view.print_scorecard(card, session_id, lang, as_json)
    raise typer.Exit(int(ExitCode.INTERRUPTED if card.stopped == "interrupt" else ExitCode.OK))


@command(app, "mistakes", example="drill mistakes --topic masks --since 2026-05-01")
def mistakes_cmd(
    topic: TopicOpt = None,
    since: Annotated[Optional[str], typer.Option("--since", metavar="DATE", help="Only mistakes made on or after this local date (YYYY-MM-DD).")] = None,
    lang: LangOpt = None,
    as_json: JsonOpt = False,
    bank: BankOpt = None,
) -> None:
    """Your 错题本: questions whose last answer was wrong and tasks whose last run failed, with diagnosis codes and when each is due."""
    from drill.practice import mistakes, review, task_review
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.views import mistakes_view

    lang, loaded, conn = resolve_lang(lang), load_bank(bank), store.connect()
    topics, day = loaded.known_topics(split_values(topic)), mistakes.since_date(since)
    task_due = {task: card.due for task, card in task_review.cards(conn).items()}
    book = mistakes.notebook(conn, loaded.questions, topics=topics, since=day, question_due=review.due_dates(conn), task_due=task_due)
    mistakes_view.print_mistakes(book, lang, as_json)


config_app = typer.Typer(help="Read and change settings. Example: drill config set lang zh", no_args_is_help=True)
app.add_typer(config_app, name="config")
KeyArg = Annotated[str, typer.Argument(help="lang, daily-goal, day-start-hour or streaks.", autocompletion=completion.config_keys)]


@command(config_app, "set", example="drill config set daily-goal 10")
def config_set(key: KeyArg, value: Annotated[str, typer.Argument(help="The new value.")]) -> None:
    """Change a setting."""
    from drill import config
    from drill.history import store
    from drill.views.console import out

    out.print(f"{key} = {config.set_value(store.connect(), key, value)}")


@command(config_app, "get", example="drill config get lang")
def config_get(key: KeyArg) -> None:
    """Print a setting's value (the default when unset)."""
    from drill import config
    from drill.history import store

    print(translated(config.shown(store.connect(), key), resolve_lang(None)))


@command(config_app, "list", example="drill config list")
def config_list() -> None:
    """Every setting with its value and what it does."""
    from rich.markup import escape

    from drill import config
    from drill.history import store
    from drill.views.console import out

    conn, lang = store.connect(), resolve_lang(None)
    for key, (_, _, help_text) in config.KEYS.items():
        out.print(f"{key} = {escape(translated(config.shown(conn, key), lang))}  [dim]# {escape(translated(help_text, lang))}[/]")


# --- grade ------------------------------------------------------------------


WHITEBOARD_MINUTES = 20


def _require_torch() -> None:
    """Grading runs user code with torch: say so in one line before anything is written."""
    from importlib.util import find_spec

    if find_spec("torch") is None:
        raise DrillError("grading needs torch, which is not installed here: {how} (or install a torch build of your choice first)", how="pip install 'llm-drill[grade]'")


def _task_names() -> str:
    """The grader's tasks for --task's help, from their folders: importing drill.grade's registry here
    would load the grader for every command (a task is a folder with a task.py, see drill/grade/tasks)."""
    return ", ".join(sorted(p.parent.name for p in (Path(__file__).parent / "grade" / "tasks").glob("*/task.py")))


TASK_NAMES = _task_names()


@command(app, "grade", example="drill grade my_attn.py --task mha")
def grade_cmd(
    file: Annotated[Path, typer.Argument(help="Your Python file (see docs/whiteboard.md for what it must define).", dir_okay=False)],
    task: Annotated[Optional[str], typer.Option("--task", autocompletion=completion.task_ids, help=Template("{tasks} (default: detected from the names the file defines).", tasks=TASK_NAMES))] = None,
    device: Annotated[str, typer.Option("--device", help="auto, cpu or cuda (cuda adds fp16 and bf16 runs).")] = "auto",
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for the random inputs (default: a fresh one, printed in the report).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds your code may run in total.")] = 60.0,
    allow_builtins: Annotated[bool, typer.Option("--allow-builtins", help="Allow torch's own attention (F.scaled_dot_product_attention, nn.MultiheadAttention).")] = False,
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Memory your code may use, e.g. 4G or 512M (default: 2G, far more than the grader's inputs need; not applied on CUDA).")] = None,
    lang: LangOpt = None,
    as_json: JsonOpt = False,
    bench: Annotated[bool, typer.Option("--bench", help="Also time your kernel: attention against the reference and torch's SDPA for T = 256 ... 4096, with peak memory; a Triton kernel (--device cuda) against torch's op and the GPU's roofline.")] = False,
    bench_max_t: Annotated[int, typer.Option("--bench-max-t", min=256, help="Largest T for --bench (quick runs).")] = 4096,
    trace: Annotated[bool, typer.Option("--trace", help="Show each line of your code with the shapes it made and the reference step it matches; name the line where it goes wrong.")] = False,
) -> None:
    """Grade your own attention code against the reference kernel and name the classic bug."""
    _require_torch()
    from drill.history import store
    from drill.grade import grade_file
    from drill.grade.kernel_env import is_kernel_task
    from drill.grade.run import bench_file, parse_size
    from drill.grade.tasks import BENCH_TASKS
    from drill.views import bench_view, grade_view

    conn = store.connect()  # an unusable database is reported before grading, not after
    with grade_view.progress(not as_json, resolve_lang(lang)) as on_event:
        report = grade_file(file, task=task, device=device, seed=seed, timeout=timeout, allow_builtins=allow_builtins,
                            memory_limit=parse_size(memory_limit) if memory_limit else None, trace=trace, on_event=on_event)  # fmt: skip
    store.record_grade_run(conn, task=report.task, file=str(file.resolve()), source="grade", passed=report.passed,
                           codes=[d.code for d in report.diagnosis], seconds=report.duration_s)  # fmt: skip
    timed_kernel = is_kernel_task(report.task) and report.device != "cpu"  # the interpreter is never timed
    benchable = bench and report.passed and (report.task in BENCH_TASKS or timed_kernel)
    timing = bench_file(file, task=report.task, device=device, seed=seed, max_t=bench_max_t) if benchable else None
    lang = "en" if as_json else resolve_lang(lang)
    if bench:
        bench_view.print_graded(report, timing, as_json, lang)
    else:
        grade_view.print_report(report, as_json, lang)
    raise typer.Exit(int(ExitCode.OK if report.passed else ExitCode.FAILED))


# --- whiteboard ---------------------------------------------------------------


@command(app, "whiteboard", example="drill whiteboard sdpa --minutes 20")
def whiteboard_cmd(
    task: Annotated[Optional[str], typer.Argument(help="Task id (see drill tasks; default: the first one not passed yet).", autocompletion=completion.task_ids)] = None,
    file: Annotated[Optional[Path], typer.Option("--file", dir_okay=False, help="Your file (default: ./drill_TASK.py); an existing file is resumed, never overwritten.")] = None,
    minutes: Annotated[int, typer.Option("--minutes", min=1, help="Time limit.")] = WHITEBOARD_MINUTES,
    editor: Annotated[bool, typer.Option("--editor", help="Open the file in $EDITOR (a GUI editor; or edit in another terminal).")] = False,
    record: Annotated[bool, typer.Option("--record", help="Count a resumed file that already passes as solved (default: a solve needs a failing state first).")] = False,
    solution: Annotated[bool, typer.Option("--solution", help="Show the reference solution, a second style where one ships, your file's diff and the hand-write question; before a pass it asks first and rates the task Again.")] = False,
    lang: LangOpt = None,
) -> None:
    """Write a task from its template on a timer; every save is re-graded until all checks pass."""
    if solution:
        _show_solution(task, file, minutes, resolve_lang(lang))
        return
    _require_torch()
    import os

    from drill.history import store, streak
    from drill.grade.kernel_env import require_triton
    from drill.views import whiteboard_view
    from drill.whiteboard import session

    conn, lang = store.connect(), resolve_lang(lang)
    exercise = session.pick_task(conn, task)
    require_triton(exercise.id)  # a kernel task without Triton: how to get it, before a template is written
    path = file or Path(f"drill_{exercise.id}.py")
    resumed = session.prepare(exercise, path)
    if editor:
        session.open_editor(os.environ.get("VISUAL") or os.environ.get("EDITOR"), path)
    view = whiteboard_view.SessionView(lang)
    view.starting(exercise, path, resumed, minutes)

    def closing(outcome, review) -> None:
        whiteboard_view.print_outcome(outcome, streak.streak_line(conn), lang, review)

    outcome, show = session.play(conn, exercise, path, view, closing, lang=lang, minutes=minutes, record=record)
    if show:
        _show_solution(exercise.id, path, minutes, lang, asked=True)
    raise typer.Exit(int(ExitCode.OK if outcome.passed else ExitCode.INTERRUPTED if outcome.stopped == "interrupted" else ExitCode.FAILED))


def _show_solution(task: Optional[str], file: Optional[Path], minutes: float, lang: str, asked: bool = False) -> None:
    """The solution screen; before any pass of the task, ask first and rate it Again (``asked``: the session did both)."""
    from drill.history import store
    from drill.bank.load import load_bank
    from drill.views import solution_view
    from drill.whiteboard import catalog, solutions

    conn = store.connect()
    exercise = catalog.get(task) if task else next((s.exercise for s in catalog.statuses(conn) if s.state != "passed"), None)
    exercise = exercise or next(iter(catalog.load().values()))
    path = file or Path(f"drill_{exercise.id}.py")
    if not asked and not solutions.passed(conn, exercise.id):
        if not solution_view.confirmed(exercise.id, lang):
            solution_view.print_kept_hidden(exercise.id, lang)
            return
        interval = solutions.give_up(conn, exercise.id, minutes * 60)
        if interval is not None:
            solution_view.print_rated_again(exercise.id, interval, lang)
    solution_view.print_solution(solutions.load(exercise, path, load_bank(None)), lang, path.name)


@command(app, "tasks", example="drill tasks --json")
def tasks_cmd(lang: LangOpt = None, as_json: JsonOpt = False) -> None:
    """List the whiteboard tasks with their level and your status: untried, failed, or passed with your best time."""
    from drill.history.store import connect
    from drill.views import whiteboard_view
    from drill.whiteboard import catalog

    whiteboard_view.print_tasks(catalog.statuses(connect()), as_json, resolve_lang(lang))


@command(app, "notebook", example="drill notebook sdpa -o sdpa.ipynb")
def notebook_cmd(
    task: Annotated[Optional[str], typer.Argument(help="Task id (see drill tasks).", autocompletion=completion.task_ids)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="The notebook to write, or a folder for it (default ./drill_TASK.ipynb); with --plan, a folder (default ./drill-plan).")] = None,
    plan: Annotated[bool, typer.Option("--plan", help="Write a study plan instead: one notebook per task by track and level, and an index.")] = False,
    lang: LangOpt = None,
) -> None:
    """Write a practice notebook for Jupyter or Colab: the task, its template under %%drill, hints; an existing file is kept."""
    from drill.notebook import build
    from drill.views import notebook_view
    from drill.whiteboard import catalog

    lang = resolve_lang(lang)
    if plan == (task is not None):
        raise DrillError(Msg("give a task (drill notebook sdpa) or --plan, not both") if plan else Msg("give a task id (drill tasks lists them) or --plan"))
    if plan:
        folder = output or Path("drill-plan")
        written, kept = build.write_plan(folder, lang)
        notebook_view.print_plan(folder, written, kept, lang)
        return
    exercise = catalog.get(task)
    name = f"drill_{exercise.id}.ipynb"
    path = output / name if output and output.is_dir() else output or Path(name)
    build.write(build.task_notebook(exercise, lang), path)
    notebook_view.print_written(path, lang)


@command(app, "selftest", example="drill selftest --device cuda")
def selftest_cmd(
    device: Annotated[str, typer.Option("--device", help="auto, cpu or cuda (cuda runs fp32, fp16 and bf16).")] = "auto",
    task: Annotated[Optional[str], typer.Option("--task", autocompletion=completion.task_ids, help="Only this task's solution and mutants.")] = None,
    lang: LangOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Prove the grader right on this machine: every bundled solution must pass, every bundled mutant must get its own code."""
    _require_torch()
    from drill.grade.selftest import run_selftest
    from drill.views import selftest_view

    lang = "en" if as_json else resolve_lang(lang)
    with selftest_view.progress(not as_json, lang) as on_row:
        result = run_selftest(device=device, task=task, on_row=on_row)
    selftest_view.print_selftest(result, as_json, lang)
    raise typer.Exit(int(ExitCode.OK if result.ok else ExitCode.FAILED))


# --- streak, stats, history, export ------------------------------------------


@command(app, "streak", example="drill streak")
def streak_command(lang: LangOpt = None, as_json: JsonOpt = False) -> None:
    """Show your streak, freezes, today's progress and a 52-week heatmap."""
    from drill.history import streak
    from drill.history.store import connect
    from drill.views import stats_view

    stats_view.print_streak(streak.report(connect()), as_json, resolve_lang(lang))


@command(app, "stats", example="drill stats --json")
def stats_command(lang: LangOpt = None, as_json: JsonOpt = False) -> None:
    """Show accuracy by level and topic, timing, weakest topics and whiteboard bests."""
    from drill.history import stats
    from drill.history.store import connect
    from drill.views import stats_view

    stats_view.print_stats(stats.collect(connect()), as_json, resolve_lang(lang))


FileArg = Annotated[Path, typer.Argument(help="File to write or read.", dir_okay=False)]


@command(history_app, "export", example="drill history export history.json")
def history_export(file: FileArg) -> None:
    """Write all your attempts, sessions, grade runs, review cards and config to JSON."""
    from drill.history import transfer as history_io
    from drill.history.store import connect
    from drill.views import history_view

    history_view.print_exported(file, history_io.export(connect(), file), resolve_lang(None))


@command(history_app, "import", example="drill history import history.json")
def history_import(file: FileArg) -> None:
    """Merge an exported history into this one: adds what is missing, never deletes, safe to repeat."""
    from drill.history import transfer as history_io
    from drill.history.store import connect
    from drill.views import history_view

    history_view.print_imported(file, history_io.import_file(connect(), file), resolve_lang(None))


@command(export_app, "anki", example="drill export anki drill.apkg --level L2")
def export_anki(
    file: FileArg,
    level: LevelOpt = None,
    topic: TopicOpt = None,
    solved: Annotated[bool, typer.Option("--solved", help="Add one card per whiteboard task you passed: your passing code, the diagnosis codes you hit on the way and their fixes.")] = False,
    bank: BankOpt = None,
) -> None:
    """Write the loaded bank as a bilingual Anki deck; re-importing updates the notes."""
    from drill.export import anki as export_anki
    from drill.bank.load import load_bank
    from drill.views import history_view

    loaded = load_bank(bank)
    questions = loaded.select(levels=split_values(level), topics=loaded.known_topics(split_values(topic)))
    if solved:
        from drill.history import store
        from drill.views.solution_view import print_solved_cards

        tasks = export_anki.solved_tasks(store.connect())
        export_anki.write(questions, file, tasks)
        history_view.print_written(file, len(questions), resolve_lang(None))
        print_solved_cards(len(tasks), resolve_lang(None))
        return
    export_anki.write(questions, file)
    history_view.print_written(file, len(questions), resolve_lang(None))


@command(export_app, "markdown", example="drill export markdown cheatsheet.md --lang zh")
def export_markdown(file: FileArg, level: LevelOpt = None, topic: TopicOpt = None, lang: LangOpt = None, bank: BankOpt = None) -> None:
    """Write a printable cheat sheet of the loaded bank, by topic and level."""
    from drill.export import markdown as export_markdown
    from drill.bank.load import load_bank
    from drill.views import history_view

    loaded = load_bank(bank)
    questions = loaded.select(levels=split_values(level), topics=loaded.known_topics(split_values(topic)))
    export_markdown.write(questions, resolve_lang(lang), file)
    history_view.print_written(file, len(questions), resolve_lang(None))


# --- doctor -----------------------------------------------------------------


@command(app, "doctor", example="drill doctor")
def doctor(lang: LangOpt = None, bank: BankOpt = None) -> None:
    """Show the data folder, loaded banks, Python, torch, CUDA and Triton."""
    import platform

    from rich.markup import escape

    from drill import torch_info
    from drill.bank.load import load_bank
    from drill.paths import data_home
    from drill.views.doctor_view import line, print_sources, word

    lang = resolve_lang(lang)
    line("drill", __version__, lang)
    line("python", f"{platform.python_version()} ({escape(sys.executable)})", lang)
    line("home", escape(str(data_home())), lang)
    try:
        loaded = load_bank(bank)
        line("banks", word("questions", lang, n=len(loaded.questions)), lang)
        print_sources(loaded, lang)
    except DrillError as exc:
        line("banks", word("broken", lang, why=escape(exc.lines[0])), lang)
    from drill.grade.user import sandbox
    from drill.views.doctor_view import print_sandbox

    print_sandbox(sandbox.available(), lang)
    from drill.grade.kernel_env import triton_version
    from drill.views.doctor_view import print_triton

    build, device = torch_info.installed(), ""
    if build is None:
        line("torch", word("no_torch", lang), lang)
    else:
        line("torch", escape(build.version), lang)
        if build.cuda is None:
            line("cuda", word("cuda_no", lang, build=word("cpu_only", lang)), lang)
        else:
            device = torch_info.cuda_device()
            if device is None:
                line("cuda", word("cuda_slow", lang, seconds=f"{torch_info.DEVICE_TIMEOUT_S:g}"), lang)
            else:
                line("cuda", word("cuda_yes", lang, name=escape(device)) if device else word("cuda_no", lang, build=build.cuda), lang)
    print_triton(triton_version(), bool(device), lang)


def main() -> None:
    import os

    if any(name.startswith("_DRILL_COMPLETE") for name in os.environ):  # tab completion walks every command
        app()
        return
    asked = help_request(sys.argv[1:], _group_names())
    if asked is None:
        pruned(app, split_lang(sys.argv[1:])[1])()  # _Root.main takes --lang out of argv
    else:
        in_language(pruned(app, asked[1]), asked[0])(asked[1])


def pruned(group: typer.Typer, argv: list[str]) -> typer.Typer:
    """``group`` with only the command ``argv`` runs. typer turns every command's signature into Click
    parameters at each start (~30 ms for drill's commands) although one runs. No command (today's
    plan) keeps none; a help flag before the command, or a name typer must suggest a fix for, keeps all."""
    import copy

    words = [i for i, arg in enumerate(argv) if not arg.startswith("-") and not (i and argv[i - 1] == "--lang" and group is app)]
    first = words[0] if words else len(argv)
    if any(arg in ("-h", "--help") for arg in argv[:first]) or (not words and group is not app):
        return group
    name = argv[first] if words else None
    commands = [c for c in group.registered_commands if c.name == name]
    groups = [g for g in group.registered_groups if g.name == name]
    if words and not commands and not groups:
        return group
    kept = copy.copy(group)
    kept.registered_commands, kept.registered_groups = commands, []
    for info in groups:
        info = copy.copy(info)
        info.typer_instance = pruned(info.typer_instance, argv[first + 1 :])
        kept.registered_groups.append(info)
    return kept


def _group_names() -> set[str]:
    return {info.name for info in app.registered_groups}
