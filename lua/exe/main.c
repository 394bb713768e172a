/* SPDX-License-Identifier: GPL-3.0-or-later AND MIT */
/* This file follows lua.c of Lua 5.4, which carries this notice (the MIT license):
 *
 * Copyright (C) 1994-2022 Lua.org, PUC-Rio.
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 * and associated documentation files (the "Software"), to deal in the Software without
 * restriction, including without limitation the rights to use, copy, modify, merge, publish,
 * distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all copies or
 * substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
 * BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 * NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 * DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 *
 * lieflow's changes and additions are under the GNU General Public License, version 3 or later
 * (LICENSE). */
/* lieflow — the executable: the Lua 5.4 stand-alone interpreter `lua` with the lieflow module
 * loaded as the global `lf`. This file mirrors lua.c of Lua 5.4 (the v5.4 branch): the same
 * functions, by the same names, in the same order, so that it can be read side by side with a new
 * release of lua.c; the command line, the environment (LUA_INIT_5_4, LUA_INIT, LUA_PATH, LUA_CPATH,
 * -E), the messages and the exit codes are lua's (tests/lua_compat_test.sh runs both). What lieflow
 * changes is marked "lieflow:" where it happens; around it:
 * - lua/exe/modules.c: where modules come from (the pure-Lua modules compiled in, lieflow.core
 *   preloaded, the user's package.path first);
 * - lua/exe/repl.c, lua/exe/complete.c: the REPL's terminal side behind lua.c's readline macros (history
 *   file, Ctrl-C at the prompt, Tab completion), and scripts/lieflow/pretty.lua, the printer of
 *   results (while the global `print` is the original);
 * - here: Ctrl-C also stops C computations (the cancel flag) and Lua code in coroutines, and a
 *   later Ctrl-C interrupts again once Lua code has received the first. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "module/lieflow_lua.h"
#include "base/lieflow_version.h" /* LIEFLOW_VERSION, generated from VERSION */
#include "exe/modules.h"
#include "exe/repl.h"


#define LUA_PROGNAME "lieflow"
#define LUA_INIT_VAR "LUA_INIT"
#define LUA_INITVARVERSION LUA_INIT_VAR LUA_VERSUFFIX

static lua_State *globalL = NULL;

static const char *progname = LUA_PROGNAME;

/* lieflow: the cancel flag (registry key "lieflow.cancel", a light userdata pointing here): set by
 * the first SIGINT during a chunk, cleared before and after every chunk the executable runs
 * (LUA_INIT, -e, -l, the script, each REPL line). C computations poll it and stop with an error,
 * so the whole chunk stops, also runs that Lua code wraps in pcall; a callback that fails while it
 * is set was interrupted. C code may reset it to 0 to mark the interrupt as delivered by its own
 * error (then lstop raises no second "interrupted!" in the Lua code that catches that error). */
static volatile sig_atomic_t cancel_flag = 0;

static void setsignal(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);  /* do not mask any signal */
    sigaction(sig, &sa, NULL);
}

static void laction(int i);

/* Hook set by laction: the next Lua instruction raises "interrupted!". lieflow: SIGINT is caught
 * again, so a later Ctrl-C interrupts Lua code again (e.g. after a pcall caught this one) instead
 * of ending the process; only a second Ctrl-C before Lua code runs again (C code that does not
 * poll the cancel flag) ends the process, as in lua. */
static void lstop(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);  /* reset hook */
    setsignal(SIGINT, laction);
    if (!cancel_flag)  /* C code delivered the interrupt already (it reset the flag) */
        return;
    luaL_error(L, "interrupted!");
}

/* SIGINT during a chunk: only set a hook that stops the interpreter (a signal handler cannot
 * change a Lua state) and, lieflow, the cancel flag that C computations poll; another SIGINT
 * before the hook runs terminates the process. */
static void laction(int i)
{
    int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
    setsignal(i, SIG_DFL);
    cancel_flag = 1;
    lua_sethook(globalL, lstop, flag, 1);
}

/* lieflow: Ctrl-C in coroutines. laction can only hook the main thread, which does not run Lua
 * code while a coroutine does (a busy loop in coroutine.wrap(f)() would need the second Ctrl-C).
 * So every coroutine gets a count hook that raises "interrupted!" while the cancel flag is set:
 * coroutine.create and coroutine.wrap are wrapped so that the thread they create inherits the
 * hook (Lua copies the creating thread's hook into a new thread), and the creating thread's own
 * hook is restored at once. The check costs one C call per 1000 instructions of coroutine code. */
static void co_check(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (cancel_flag)
        luaL_error(L, "interrupted!");
}

static int co_creator(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);  /* the original's check, named after this function */
    lua_Hook hook = lua_gethook(L);
    int mask = lua_gethookmask(L), count = lua_gethookcount(L);
    lua_settop(L, 1);
    if (hook == NULL)  /* (a debugging hook of the user's is inherited instead) */
        lua_sethook(L, co_check, LUA_MASKCOUNT, 1000);
    lua_pushvalue(L, lua_upvalueindex(1));  /* the original coroutine.create / wrap */
    lua_insert(L, 1);
    lua_call(L, 1, 1);  /* cannot fail but for memory */
    if (hook == NULL)
        lua_sethook(L, hook, mask, count);
    return 1;
}

/* lieflow: the coroutine hooks above, and the cancel flag in the registry for C computations. */
static void setup_interrupts(lua_State *L)
{
    const char *names[] = {"create", "wrap"};
    if (lua_getglobal(L, "coroutine") == LUA_TTABLE) {
        for (int i = 0; i < 2; i++) {
            if (lua_getfield(L, -1, names[i]) == LUA_TFUNCTION) {
                lua_pushcclosure(L, co_creator, 1);
                lua_setfield(L, -2, names[i]);
            } else
                lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, (void *)&cancel_flag);
    lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.cancel");
}

/* lua's option list (same lines, same order), then what lieflow adds. */
static void print_options(FILE *f)
{
    fprintf(f,
        "usage: %s [options] [script [args]]\n"
        "Available options are:\n"
        "  -e stat   execute string 'stat'\n"
        "  -i        enter interactive mode after executing 'script'\n"
        "  -l mod    require library 'mod' into global 'mod'\n"
        "  -l g=mod  require library 'mod' into global 'g'\n"
        "  -v        show version information\n"
        "  -E        ignore environment variables\n"
        "  -W        turn warnings on\n"
        "  --        stop handling options\n"
        "  -         stop handling options and execute stdin\n",
        progname);
    fprintf(f,
        "lieflow also accepts:\n"
        "  -h, --help  show this help and exit\n"
        "  --version   same as -v\n");
}

static void print_usage(const char *badoption)
{
    fflush(stdout);
    fprintf(stderr, "%s: ", progname);
    if (badoption[1] == 'e' || badoption[1] == 'l')
        fprintf(stderr, "'%s' needs argument\n", badoption);
    else
        fprintf(stderr, "unrecognized option '%s'\n", badoption);
    print_options(stderr);
    fflush(stderr);
}

/* lieflow: -h, --help */
static void print_help(void)
{
    print_options(stdout);
    printf("lieflow is Lua 5.4 with the lieflow module loaded as the global 'lf' (scripts that\n"
           "also run under lua5.4 write: local lf = require \"lieflow\"). Without a script it\n"
           "runs the REPL if stdin is a terminal, else stdin. Environment: LUA_INIT_5_4 or\n"
           "LUA_INIT (code, or @file) runs first; LUA_PATH(_5_4) and LUA_CPATH(_5_4) set\n"
           "package.path and package.cpath; a lieflow module found in a directory of LUA_PATH\n"
           "that is not one of Lua's defaults replaces the built-in copy.\n"
           "REPL: history in ~/" LF_HISTORY_NAME ", Tab completes names, a.b / a:b chains and\n"
           "object fields, Ctrl-C interrupts a computation or clears the line, Ctrl-D exits.\n");
    fflush(stdout);
}

/* Print an error message, with the program name in front of it (if present). */
static void l_message(const char *pname, const char *msg)
{
    fflush(stdout);
    if (pname)
        fprintf(stderr, "%s: ", pname);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
}

/* If status is not OK, print the error message on the top of the stack and pop it. */
static int report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (msg == NULL)
            msg = "(error object is not a string)";
        l_message(progname, msg);
        lua_pop(L, 1);  /* remove message */
    }
    return status;
}

/* Message handler used to run all chunks: the message with a traceback. */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {  /* is error object not a string? */
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;  /* that is the message */
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);  /* append a standard traceback */
    return 1;
}

/* lua_pcall with SIGINT caught by laction (docall; lieflow: also the user's print in l_print, which
 * runs without a message handler): the handler before it (the REPL's) is restored after it, the
 * cancel flag is cleared before and after, and a hook set by a late SIGINT is removed. */
static int interruptible_pcall(lua_State *L, int narg, int nres, int msgh)
{
    struct sigaction old;
    int status;
    globalL = L;  /* to be available to 'laction' */
    cancel_flag = 0;
    sigaction(SIGINT, NULL, &old);
    setsignal(SIGINT, laction);  /* set C-signal handler */
    status = lua_pcall(L, narg, nres, msgh);
    sigaction(SIGINT, &old, NULL);  /* reset C-signal handler */
    if (lua_gethook(L) == lstop)  /* a SIGINT arrived as the call returned */
        lua_sethook(L, NULL, 0, 0);
    cancel_flag = 0;
    return status;
}

/* lua_pcall with the message handler and SIGINT handling; used to run all chunks. */
static int docall(lua_State *L, int narg, int nres)
{
    int status;
    int base = lua_gettop(L) - narg;  /* function index */
    lua_pushcfunction(L, msghandler);  /* push message handler */
    lua_insert(L, base);  /* put it under function and args */
    status = interruptible_pcall(L, narg, nres, base);
    lua_remove(L, base);  /* remove message handler from the stack */
    return status;
}

static void print_version(void)
{
    printf("%s %s \xE2\x80\x94 %s\n", LUA_PROGNAME, LIEFLOW_VERSION, LUA_COPYRIGHT);
    fflush(stdout);
}

/* The table 'arg': the script name at index 0, its arguments at 1, 2, ..., the interpreter and the
 * options before the script at negative indices; without a script, the interpreter at 0. */
static void createargtable(lua_State *L, char **argv, int argc, int script)
{
    int i, narg;
    narg = argc - (script + 1);  /* number of positive indices */
    lua_createtable(L, narg, script + 1);
    for (i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int dochunk(lua_State *L, int status)
{
    if (status == LUA_OK)
        status = docall(L, 0, 0);
    return report(L, status);
}

static int dofile(lua_State *L, const char *name)
{
    return dochunk(L, luaL_loadfile(L, name));
}

static int dostring(lua_State *L, const char *s, const char *name)
{
    return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* 'globname[=modname]': globname = require(modname). lieflow: as in Lua 5.4.4, a '-' in globname
 * is kept (no version suffix cut). */
static int dolibrary(lua_State *L, const char *globname)
{
    int status;
    const char *eq = strchr(globname, '=');
    const char *modname = eq ? eq + 1 : globname;
    lua_getglobal(L, "require");
    lua_pushstring(L, modname);
    status = docall(L, 1, 1);  /* call 'require(modname)' */
    if (status == LUA_OK) {
        lua_pushlstring(L, globname, eq ? (size_t)(eq - globname) : strlen(globname));
        lua_insert(L, -2);
        lua_setglobal(L, lua_tostring(L, -2));  /* globname = require(modname) */
        lua_pop(L, 1);
    }
    return report(L, status);
}

/* Push arg[1..#arg] (the script's `...`); return how many. */
static int pushargs(lua_State *L)
{
    int i, n;
    if (lua_getglobal(L, "arg") != LUA_TTABLE)
        luaL_error(L, "'arg' is not a table");
    n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (i = 1; i <= n; i++)
        lua_rawgeti(L, -i, i);
    lua_remove(L, -i);  /* remove table from the stack */
    return n;
}

static int handle_script(lua_State *L, char **argv)
{
    int status;
    const char *fname = argv[0];
    if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0)
        fname = NULL;  /* stdin */
    status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
        int n = pushargs(L);  /* push arguments to script */
        status = docall(L, n, LUA_MULTRET);
    }
    return report(L, status);
}

/* bits of various argument indicators in 'args' */
#define has_error 1  /* bad option */
#define has_i 2      /* -i */
#define has_v 4      /* -v (lieflow: or --version) */
#define has_e 8      /* -e */
#define has_E 16     /* -E */
#define has_help 32  /* lieflow: -h, --help */

/* Check the options before running any Lua code: a mask of those needed first, or has_error.
 * *first gets the index of the bad option on error, else that of the script, or 0 if none.
 * (main makes sure there is an argv[0].) */
static int collectargs(char **argv, int *first)
{
    int args = 0;
    int i;
    if (argv[0][0])  /* not empty? */
        progname = argv[0];
    for (i = 1; argv[i] != NULL; i++) {
        *first = i;
        if (argv[i][0] != '-')  /* not an option? */
            return args;  /* stop handling options */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "--version") == 0) {  /* lieflow */
            args |= argv[i][2] == 'h' ? has_help : has_v;
            continue;
        }
        switch (argv[i][1]) {
        case '-':  /* '--' */
            if (argv[i][2] != '\0')
                return has_error;
            *first = (argv[i + 1] != NULL) ? i + 1 : 0;  /* the script, if any, comes after '--' */
            return args;
        case '\0':  /* '-' */
            return args;  /* script "name" is '-' */
        case 'E':
            if (argv[i][2] != '\0')
                return has_error;
            args |= has_E;
            break;
        case 'W':
            if (argv[i][2] != '\0')
                return has_error;
            break;
        case 'h':  /* lieflow */
            if (argv[i][2] != '\0')
                return has_error;
            args |= has_help;
            break;
        case 'i':
            args |= has_i;  /* (-i implies -v) */
            /* fall through */
        case 'v':
            if (argv[i][2] != '\0')
                return has_error;
            args |= has_v;
            break;
        case 'e':
            args |= has_e;
            /* fall through */
        case 'l':  /* both options need an argument */
            if (argv[i][2] == '\0') {  /* no concatenated argument? */
                i++;
                if (argv[i] == NULL || argv[i][0] == '-')
                    return has_error;  /* no next argument or it is another option */
            }
            break;
        default:
            return has_error;
        }
    }
    *first = 0;  /* no script name */
    return args;
}

/* Run -e and -l (and -W) in command-line order. Returns 0 if some code raised an error. */
static int runargs(lua_State *L, char **argv, int n)
{
    int i;
    for (i = 1; i < n; i++) {
        int option = argv[i][1];
        switch (option) {
        case 'e':
        case 'l': {
            int status;
            const char *extra = argv[i] + 2;  /* both options need an argument */
            if (*extra == '\0')
                extra = argv[++i];
            status = option == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
            if (status != LUA_OK)
                return 0;
            break;
        }
        case 'W':
            lua_warning(L, "@on", 0);  /* warnings on */
            break;
        }
    }
    return 1;
}

static int handle_luainit(lua_State *L)
{
    const char *name = "=" LUA_INITVARVERSION;
    const char *init = getenv(name + 1);
    if (init == NULL) {
        name = "=" LUA_INIT_VAR;
        init = getenv(name + 1);  /* try alternative name */
    }
    if (init == NULL)
        return LUA_OK;
    else if (init[0] == '@')
        return dofile(L, init + 1);
    else
        return dostring(L, init, name);
}

/* lieflow: lf = require "lieflow" (after LUA_INIT, which may change package.path). */
static int load_lieflow(lua_State *L)
{
    int status;
    lua_getglobal(L, "require");
    lua_pushliteral(L, "lieflow");
    status = docall(L, 1, 1);
    if (status == LUA_OK)
        lua_setglobal(L, "lf");
    return report(L, status) == LUA_OK;
}

/*
** {==================================================================
** Read-Eval-Print Loop (REPL)
** ===================================================================
*/

#define LUA_PROMPT "> "
#define LUA_PROMPT2 ">> "

#define lua_stdin_is_tty() isatty(0)

/* lua_readline shows a prompt and reads a line (lieflow: LF_LINE_OK, LF_LINE_EOF, or LF_LINE_INTR
 * for a line cancelled by Ctrl-C); lua_saveline keeps a line in the history; lua_freeline frees a
 * line read. lieflow's implementations are in lua/exe/repl.c; lf_repl_done ends the REPL. */
#define lua_initreadline(L) lf_repl_init(L)
#define lua_readline(L, b, p) lf_repl_readline(L, &(b), p)
#define lua_saveline(L, line) lf_repl_saveline(L, line)
#define lua_freeline(L, b) ((void)L, free(b))

/* lieflow: loadline's result for a line cancelled by Ctrl-C (-1: no more input, as in lua.c) */
#define REPL_INTR (-2)

/* The prompt: _PROMPT / _PROMPT2 through tostring, else the default; the string (or nil) is left
 * on the stack, to keep it anchored. */
static const char *get_prompt(lua_State *L, int firstline)
{
    if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL)
        return firstline ? LUA_PROMPT : LUA_PROMPT2;  /* use the default */
    else {  /* apply 'tostring' over the value */
        const char *p = luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);  /* remove original value */
        return p;
    }
}

/* mark in error messages for incomplete statements */
#define EOFMARK "<eof>"
#define marklen (sizeof(EOFMARK) / sizeof(char) - 1)

/* Is status a syntax error whose message (on top of the stack) ends with EOFMARK? */
static int incomplete(lua_State *L, int status)
{
    if (status == LUA_ERRSYNTAX) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        if (lmsg >= marklen && strcmp(msg + lmsg - marklen, EOFMARK) == 0)
            return 1;
    }
    return 0;
}

/* Prompt the user, read a line, and push it; returns lua_readline's result. */
static int pushline(lua_State *L, int firstline)
{
    char *b = NULL;
    size_t l;
    const char *prmt = get_prompt(L, firstline);
    int readstatus = lua_readline(L, b, prmt);
    lua_pop(L, 1);  /* remove prompt */
    if (readstatus != LF_LINE_OK)
        return readstatus;  /* no input (lieflow: or Ctrl-C) */
    l = strlen(b);
    if (l > 0 && b[l - 1] == '\n')  /* line ends with newline? */
        b[--l] = '\0';  /* remove it */
    if (firstline && b[0] == '=')  /* for compatibility with 5.2, ... */
        lua_pushfstring(L, "return %s", b + 1);  /* change '=' to 'return' */
    else
        lua_pushlstring(L, b, l);
    lua_freeline(L, b);
    return LF_LINE_OK;
}

/* Try to compile the line on the stack as 'return <line>;'; on return, the stack has either the
 * compiled chunk or the original line (if compilation failed). */
static int addreturn(lua_State *L)
{
    const char *line = lua_tostring(L, -1);  /* original line */
    const char *retline = lua_pushfstring(L, "return %s;", line);
    int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
    if (status == LUA_OK) {
        lua_remove(L, -2);  /* remove modified line */
        if (line[0] != '\0')  /* non empty? */
            lua_saveline(L, line);  /* keep history */
    } else
        lua_pop(L, 2);  /* pop result from 'luaL_loadbuffer' and modified line */
    return status;
}

/* Read more lines until the chunk is a complete statement. lieflow: Ctrl-C at the continuation
 * prompt drops the chunk (kept in the history) and returns REPL_INTR. */
static int multiline(lua_State *L)
{
    for (;;) {  /* repeat until gets a complete statement */
        size_t len;
        const char *line = lua_tolstring(L, 1, &len);  /* get what it has */
        int status = luaL_loadbuffer(L, line, len, "=stdin");  /* try it */
        int readstatus = LF_LINE_EOF;
        if (!incomplete(L, status) || (readstatus = pushline(L, 0)) != LF_LINE_OK) {
            lua_saveline(L, line);  /* keep history */
            return readstatus == LF_LINE_INTR ? REPL_INTR : status;
        }
        lua_remove(L, -2);  /* remove error message (from incomplete line) */
        lua_pushliteral(L, "\n");  /* add newline... */
        lua_insert(L, -2);  /* ...between the two lines */
        lua_concat(L, 3);  /* join them */
    }
}

/* Read a line and compile it, first as an expression ('return' in front), else as statements;
 * returns the status of the load (-1: no input; lieflow: REPL_INTR, the line cancelled by Ctrl-C)
 * with the function, or the error message, on top of the stack. */
static int loadline(lua_State *L)
{
    int status;
    lua_settop(L, 0);
    if ((status = pushline(L, 1)) != LF_LINE_OK)
        return status == LF_LINE_INTR ? REPL_INTR : -1;  /* no input */
    if ((status = addreturn(L)) != LUA_OK)  /* 'return ...' did not work? */
        status = multiline(L);  /* try as command, maybe with continuation lines */
    lua_remove(L, 1);  /* remove line from the stack */
    return status;
}

/* Print the values on the stack. lieflow: while the global 'print' is the original one, with the
 * pretty printer (lieflow.pretty, through lf_repl_format); else by calling 'print', as lua. */
static void l_print(lua_State *L)
{
    int n = lua_gettop(L);
    if (n > 0) {  /* any result to be printed? */
        int own;
        luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
        lua_getglobal(L, "print");
        lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.print");
        own = lua_rawequal(L, -1, -2);
        lua_pop(L, 1);
        if (own) {
            lua_pop(L, 1);
            lua_pushcfunction(L, lf_repl_format);
            lua_insert(L, 1);
            if (docall(L, n, 1) == LUA_OK) {
                size_t len;
                const char *s = lua_tolstring(L, -1, &len);
                fwrite(s, 1, len, stdout);
                fputc('\n', stdout);
                fflush(stdout);
            } else
                l_message(progname, lua_pushfstring(L, "error printing the result (%s)", lua_tostring(L, -1)));
        } else {
            lua_insert(L, 1);
            if (interruptible_pcall(L, n, 0, 0) != LUA_OK)
                l_message(progname, lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1)));
        }
    }
}

/* The REPL: read (load) a line, evaluate (call) it, print its results; again. */
static void doREPL(lua_State *L)
{
    int status;
    const char *oldprogname = progname;
    progname = NULL;  /* no 'progname' on errors in interactive mode */
    lua_initreadline(L);
    while ((status = loadline(L)) != -1) {
        if (status == REPL_INTR)  /* lieflow: Ctrl-C at a prompt */
            continue;
        if (status == LUA_OK)
            status = docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK)
            l_print(L);
        else
            report(L, status);
    }
    lua_settop(L, 0);  /* clear stack */
    lf_repl_done(L);  /* lieflow: lua_writeline(), unless readline ended the line; the handlers back */
    progname = oldprogname;
}

/* }================================================================== */

/* The main body of the interpreter, in protected mode: the options, in lua's order (-v, -E, the
 * libraries, arg, LUA_INIT, -e/-l/-W, the script, the REPL); lieflow: -h/--help, the interrupt
 * hooks, the modules and lf = require "lieflow" after LUA_INIT. */
static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = (char **)lua_touserdata(L, 2);
    int script;
    int args = collectargs(argv, &script);
    int optlim = (script > 0) ? script : argc;  /* first argv not an option */
    luaL_checkversion(L);  /* check that interpreter has correct version */
    if (args == has_error) {  /* bad arg? */
        print_usage(argv[script]);  /* 'script' has index of bad arg. */
        return 0;
    }
    if (args & has_help) {  /* lieflow */
        print_help();
        lua_pushboolean(L, 1);
        return 1;
    }
    if (args & has_v)  /* option '-v'? */
        print_version();
    if (args & has_E) {  /* option '-E'? */
        lua_pushboolean(L, 1);  /* signal for libraries to ignore env. vars. */
        lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
    }
    luaL_openlibs(L);  /* open standard libraries */
    setup_interrupts(L);  /* lieflow */
    lua_getglobal(L, "print");  /* lieflow: the REPL pretty-prints while `print` is this one */
    lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.print");
    createargtable(L, argv, argc, script);  /* create table 'arg' */
    lua_gc(L, LUA_GCRESTART);  /* start GC... */
    lua_gc(L, LUA_GCGEN, 0, 0);  /* ...in generational mode */
    lf_setup_modules(L);  /* lieflow */
    if (!(args & has_E)) {  /* no option '-E'? */
        if (handle_luainit(L) != LUA_OK)  /* run LUA_INIT */
            return 0;  /* error running LUA_INIT */
    }
    if (!load_lieflow(L))  /* lieflow */
        return 0;
    if (!runargs(L, argv, optlim))  /* execute arguments -e and -l */
        return 0;  /* something failed */
    if (script > 0) {  /* execute main script (if there is one) */
        if (handle_script(L, argv + script) != LUA_OK)
            return 0;  /* interrupt in case of error */
    }
    if (args & has_i)  /* -i option? */
        doREPL(L);  /* do read-eval-print loop */
    else if (script < 1 && !(args & (has_e | has_v))) {  /* no active option? */
        if (lua_stdin_is_tty()) {  /* running in interactive mode? */
            print_version();
            doREPL(L);  /* do read-eval-print loop */
        } else if (dofile(L, NULL) != LUA_OK)  /* executes stdin as a file */
            return 0;  /* lieflow: an error in stdin's chunk is exit code 1 (lua: 0) */
    }
    lua_pushboolean(L, 1);  /* signal no errors */
    return 1;
}

int main(int argc, char **argv)
{
    static char *no_args[] = {LUA_PROGNAME, NULL};
    int status, result;
    lua_State *L;
    if (argc < 1 || argv[0] == NULL) {  /* lieflow: no argv[0] (execve): as if "lieflow" */
        argc = 1;
        argv = no_args;
    }
    L = luaL_newstate();  /* create state */
    if (L == NULL) {
        l_message(argv[0][0] ? argv[0] : LUA_PROGNAME, "cannot create state: not enough memory");
        return EXIT_FAILURE;
    }
    lua_gc(L, LUA_GCSTOP);  /* stop GC while building state */
    lua_pushcfunction(L, pmain);  /* to call 'pmain' in protected mode */
    lua_pushinteger(L, argc);  /* 1st argument */
    lua_pushlightuserdata(L, argv);  /* 2nd argument */
    status = lua_pcall(L, 2, 1, 0);  /* do the call */
    result = lua_toboolean(L, -1);  /* get result */
    report(L, status);
    lua_close(L);
    return (result && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
