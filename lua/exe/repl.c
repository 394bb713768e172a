/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the REPL's terminal side (see exe/repl.h): how lua/exe/main.c's REPL reads a line and where
 * its history goes; how it prints results.
 * - At a terminal, readline through its callback interface, so that signals only set flags and
 *   readline is never left in an inconsistent state: Ctrl-C cancels the line being edited,
 *   SIGWINCH resizes, SIGTERM and SIGHUP restore the terminal and end the process by that signal.
 *   Every line is appended to ~/.lieflow_history as soon as it is entered (so a session ended by a
 *   signal or a crash loses nothing); the file is cut to HISTORY_MAX lines at start and at exit.
 * - Piped input is read as `lua5.4 -i` reads it (its readline): the prompt, then the echo of the
 *   line read; Ctrl-C while waiting cancels the line.
 * - Results are formatted in Lua (scripts/lieflow/pretty.lua) for the terminal's width. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include <lauxlib.h>
#include <lua.h>

#include "exe/repl.h"

#define HISTORY_MAX 1000

static int use_readline = 0;  /* stdin is a terminal */
static volatile sig_atomic_t got_sigint = 0, got_sigwinch = 0, got_term = 0;
static struct sigaction old_int, old_winch;  /* the handlers before lf_repl_init */
static char history_file[PATH_MAX];  /* empty: no history file */
static char *history_last = NULL;    /* the line appended to it last: no consecutive duplicates */
static char *pending_line = NULL;    /* the line readline handed over */
static int pending_done = 0;

/* ------------------------------------------------------------------ signals and history */

static void on_sigint(int sig)
{
    (void)sig;
    got_sigint = 1;
}

static void on_sigwinch(int sig)
{
    (void)sig;
    got_sigwinch = 1;
}

static void on_term(int sig)  /* SIGTERM, SIGHUP while readline has the terminal */
{
    got_term = sig;
}

static void set_handler(int sig, void (*handler)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  /* no SA_RESTART: a blocking read returns EINTR */
    sigaction(sig, &sa, old);
}

/* At exit: keep the history file bounded (every line was appended when it was entered). */
static void finish_history(void)
{
    if (history_file[0])
        history_truncate_file(history_file, HISTORY_MAX);
    clear_history();
    free(history_last);
    history_last = NULL;
}

/* The history file ~/.lieflow_history, created private (mode 0600) if missing, read into the
 * in-memory history; none if $HOME is unset or the file cannot be written (history for this
 * session only). */
static void open_history(void)
{
    static int history_registered = 0;
    const char *home = getenv("HOME");
    using_history();
    stifle_history(HISTORY_MAX);
    history_file[0] = '\0';
    if (home && home[0]
        && snprintf(history_file, sizeof history_file, "%s/%s", home, LF_HISTORY_NAME)
               < (int)sizeof history_file) {
        int fd = open(history_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            close(fd);
            read_history(history_file);
            history_truncate_file(history_file, HISTORY_MAX);
        } else {
            history_file[0] = '\0';
        }
    } else {
        history_file[0] = '\0';
    }
    if (!history_registered) {
        atexit(finish_history);
        history_registered = 1;
    }
}

static void init_readline(lua_State *L)
{
    rl_readline_name = "lieflow";
    rl_catch_signals = 0;  /* SIGINT, SIGTERM, SIGHUP and SIGWINCH are handled in read_readline */
    rl_catch_sigwinch = 0;
    lf_complete_init(L);
    rl_initialize();
    open_history();
}

/* Append a line, as typed, to the history file at once (before it runs), so that nothing is lost
 * when the session ends by a signal (SIGTERM, SIGHUP, a second Ctrl-C in C code) or a crash, not
 * even the first lines of an unfinished multi-line chunk. */
static void append_to_history_file(const char *line)
{
    FILE *f;
    if (line[0] == '\0' || history_file[0] == '\0' || (history_last && strcmp(history_last, line) == 0))
        return;
    f = fopen(history_file, "a");
    if (f == NULL)
        return;
    fprintf(f, "%s\n", line);
    fclose(f);
    free(history_last);
    history_last = strdup(line);
}

/* ------------------------------------------------------------------ reading a line */

/* At end of input, readline (with bracketed paste on) already moved to a new line. */
static int readline_ended_line(void)
{
    const char *bp = rl_variable_value("enable-bracketed-paste");
    return bp != NULL && strcmp(bp, "on") == 0;
}

static void on_readline_line(char *line)
{
    pending_line = line;
    pending_done = 1;
    rl_callback_handler_remove();
}

/* Ctrl-C at the prompt: drop the line being edited. */
static void cancel_readline(void)
{
    rl_point = rl_end;
    rl_redisplay();
    fputs("^C", rl_outstream);
    fflush(rl_outstream);
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_replace_line("", 1);
    rl_callback_handler_remove();
    fputc('\n', rl_outstream);
    fflush(rl_outstream);
}

/* SIGTERM or SIGHUP at the prompt: restore the terminal, bound the history file, then end the
 * process by the same signal (orig: the signal mask to restore). */
static void end_by_signal(int sig, const sigset_t *orig)
{
    rl_callback_sigcleanup();
    rl_callback_handler_remove();  /* restores the terminal */
    fputc('\n', rl_outstream);
    fflush(rl_outstream);
    finish_history();
    set_handler(sig, SIG_DFL, NULL);
    sigprocmask(SIG_SETMASK, orig, NULL);
    raise(sig);
    _exit(128 + sig);  /* not reached */
}

/* Feed readline the characters of the terminal until it hands over a line: the signals are
 * blocked except while pselect waits (with waitmask), so they are seen here, between characters. */
static int readline_loop(const sigset_t *waitmask, const sigset_t *orig)
{
    while (!pending_done) {
        int fd = fileno(rl_instream), r;
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(fd, &fds);
        r = pselect(fd + 1, &fds, NULL, NULL, NULL, waitmask);
        if (got_term)
            end_by_signal(got_term, orig);
        if (got_sigwinch) {
            got_sigwinch = 0;
            rl_resize_terminal();
        }
        if (got_sigint) {
            cancel_readline();
            return LF_LINE_INTR;
        }
        if (r < 0 && errno != EINTR) {
            rl_callback_handler_remove();
            break;
        }
        if (r > 0)
            rl_callback_read_char();
    }
    return LF_LINE_OK;
}

/* Read one line with readline's callback interface (see readline_loop). */
static int read_readline(const char *prompt, char **out)
{
    static const int sigs[] = {SIGINT, SIGWINCH, SIGTERM, SIGHUP};
    struct sigaction old_term, old_hup;
    sigset_t block, orig, waitmask;
    int status;
    size_t i;
    sigemptyset(&block);
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&block, sigs[i]);
    sigprocmask(SIG_BLOCK, &block, &orig);
    set_handler(SIGTERM, on_term, &old_term);
    set_handler(SIGHUP, on_term, &old_hup);
    waitmask = orig;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigdelset(&waitmask, sigs[i]);
    got_sigint = 0;
    if (got_sigwinch) {
        got_sigwinch = 0;
        rl_reset_screen_size();
    }
    pending_line = NULL;
    pending_done = 0;
    using_history();
    rl_callback_handler_install(prompt, on_readline_line);
    status = readline_loop(&waitmask, &orig);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    sigprocmask(SIG_SETMASK, &orig, NULL);
    if (status == LF_LINE_OK) {
        *out = pending_line;
        status = pending_line ? LF_LINE_OK : LF_LINE_EOF;
    }
    return status;
}

/* Read one line from a stdin that is not a terminal as `lua5.4 -i` does (its readline): print the
 * prompt, then echo the line read. */
static int read_plain(const char *prompt, char **out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    got_sigint = 0;
    fputs(prompt, stdout);
    fflush(stdout);
    n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        if (got_sigint) {
            clearerr(stdin);
            fputc('\n', stdout);
            return LF_LINE_INTR;
        }
        return LF_LINE_EOF;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    fwrite(line, 1, (size_t)n, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    *out = line;
    return LF_LINE_OK;
}

/* ------------------------------------------------------------------ the REPL's hooks (exe/repl.h) */

void lf_repl_init(lua_State *L)
{
    use_readline = isatty(STDIN_FILENO);
    if (use_readline) {
        /* help(x) = lf.help(x) at a terminal (not in scripts or piped input, which stay as in lua) */
        int top = lua_gettop(L);
        if (lua_getglobal(L, "help") == LUA_TNIL && lua_getglobal(L, "lf") == LUA_TTABLE &&
            lua_getfield(L, -1, "help") == LUA_TFUNCTION)
            lua_setglobal(L, "help");
        lua_settop(L, top);
        printf("`lf` is loaded: help() shows the reference, Tab completes names and fields, Ctrl-C interrupts, "
               "Ctrl-D exits\n");
        fflush(stdout);
    }
    set_handler(SIGINT, on_sigint, &old_int);
    set_handler(SIGWINCH, on_sigwinch, &old_winch);
    if (use_readline)
        init_readline(L);
}

int lf_repl_readline(lua_State *L, char **line, const char *prompt)
{
    int status;
    (void)L;
    *line = NULL;
    status = use_readline ? read_readline(prompt, line) : read_plain(prompt, line);
    if (status == LF_LINE_OK && use_readline)
        append_to_history_file(*line);
    return status;
}

void lf_repl_saveline(lua_State *L, const char *line)
{
    HIST_ENTRY *last;
    (void)L;
    if (!use_readline || line[0] == '\0')
        return;
    last = history_get(history_base + history_length - 1);
    if (last == NULL || strcmp(last->line, line) != 0)
        add_history(line);
}

void lf_repl_done(lua_State *L)
{
    (void)L;
    lf_complete_done();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGWINCH, &old_winch, NULL);
    if (!use_readline || !readline_ended_line())
        fputc('\n', stdout);
    fflush(stdout);
}

/* ------------------------------------------------------------------ printing results */

/* The terminal's width in characters (INT_MAX if stdout is not a terminal: no column is cut). */
static int terminal_columns(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return INT_MAX;
}

int lf_repl_format(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checkstack(L, 3, "too many results to print");
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "lieflow.pretty") != LUA_TTABLE) {  /* not loaded yet */
        lua_pop(L, 1);
        lua_getglobal(L, "require");
        lua_pushliteral(L, "lieflow.pretty");
        lua_call(L, 1, 1);
    }
    lua_getfield(L, -1, "results");
    lua_replace(L, -3);
    lua_pop(L, 1);
    lua_insert(L, 1);
    lua_pushinteger(L, terminal_columns());
    lua_insert(L, 2);
    lua_call(L, n + 1, 1);
    return 1;
}
