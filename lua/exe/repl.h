/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the REPL's terminal side, for lua/exe/main.c (lua.c's readline macros map onto these):
 * lua/exe/repl.c reads lines (readline at a terminal, history appended to ~/.lieflow_history, Ctrl-C
 * at the prompt, SIGTERM/SIGHUP/SIGWINCH; piped input as `lua5.4 -i` reads it) and formats the
 * results (lieflow.pretty); lua/exe/complete.c completes names on Tab. */
#ifndef LIEFLOW_REPL_H
#define LIEFLOW_REPL_H

#include <lua.h>

#define LF_HISTORY_NAME ".lieflow_history"  /* in $HOME */

/* lf_repl_readline's results: a line was read, the input ended, the line was cancelled by Ctrl-C. */
enum { LF_LINE_EOF = 0, LF_LINE_OK = 1, LF_LINE_INTR = 2 };

/* Start the REPL: at a terminal, help = lf.help, the banner line and readline with history and
 * completion; in any case Ctrl-C at the prompt (or while waiting for piped input) cancels the line. */
void lf_repl_init(lua_State *L);
/* Show the prompt and read a line into *line (malloc'ed, without its newline; free it) at a
 * terminal with readline (the line goes to the history file at once), else from stdin, echoed. */
int lf_repl_readline(lua_State *L, char **line, const char *prompt);
/* Add a line, or a whole multi-line chunk, to the in-memory history (Up/Down). */
void lf_repl_saveline(lua_State *L, const char *line);
/* End the REPL: the signal handlers of before lf_repl_init, and the last newline (unless readline
 * already wrote it). */
void lf_repl_done(lua_State *L);
/* Lua function: the text the REPL prints for its arguments (the results of a line), by
 * require("lieflow.pretty").results(terminal width, ...). */
int lf_repl_format(lua_State *L);

/* Tab completion (lua/exe/complete.c): install readline's hooks for the state L; forget L. */
void lf_complete_init(lua_State *L);
void lf_complete_done(void);

#endif
