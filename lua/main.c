/* lieflow — the executable (DESIGN §4): a Lua 5.4 interpreter with the lieflow module loaded as the
 * global `lf`. Script mode follows the stock `lua` (arguments, `arg`, -e -i -l -W -, exit codes);
 * with a terminal it runs a readline REPL: history in ~/.lieflow_history, multi-line input,
 * pretty-printed results, Tab completion of names and field chains, Ctrl-C interrupts.
 * The structure of the REPL and of the option handling mirrors lua.c of Lua 5.4. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lieflow.h"
#include "lieflow_lua.h"

#ifndef LIEFLOW_VERSION
#define LIEFLOW_VERSION "0.1.0"
#endif

#define PROGNAME "lieflow"
#define HISTORY_NAME ".lieflow_history"
#define HISTORY_MAX 1000
#define PP_MAX_DEPTH 4    /* tables nested deeper print as {…} */
#define PP_MAX_ITEMS 40   /* entries shown per table before "…" */
#define ELLIPSIS "\xE2\x80\xA6"

/* ------------------------------------------------------------------ messages and protected calls */

static lua_State *globalL = NULL;  /* the state the SIGINT handler interrupts */
/* Set by SIGINT during a call: C integrators poll it (registered as "lieflow.cancel"), so a long
 * it:step(n) inside C stops too, not only Lua code. */
static volatile sig_atomic_t cancel_flag = 0;

static void print_version(void)
{
    printf("%s %s (%s)\n", PROGNAME, LIEFLOW_VERSION, LUA_RELEASE);
    fflush(stdout);
}

static void print_usage(FILE *f)
{
    fprintf(f,
        "usage: " PROGNAME " [options] [script [args]]\n"
        "Lua 5.4 with the lieflow module loaded as the global 'lf'.\n"
        "Without a script: the interactive REPL if stdin is a terminal, else runs stdin.\n"
        "Available options are:\n"
        "  -e stat        execute string 'stat'\n"
        "  -i             enter interactive mode after executing 'script'\n"
        "  -l mod         require library 'mod' into global 'mod'\n"
        "  -l g=mod       require library 'mod' into global 'g'\n"
        "  -W             turn warnings on\n"
        "  -v, --version  show version information and exit\n"
        "  -h, --help     show this help and exit\n"
        "  --             stop handling options\n"
        "  -              stop handling options and execute stdin\n"
        "REPL: history in ~/" HISTORY_NAME ", Tab completes names and a.b / a:b chains,\n"
        "Ctrl-C interrupts a computation or clears the line, Ctrl-D exits.\n");
    fflush(f);
}

/* Print "progname: msg" (or just msg when pname is NULL) on stderr. */
static void l_message(const char *pname, const char *msg)
{
    fflush(stdout);
    if (pname)
        fprintf(stderr, "%s: ", pname);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
}

/* Report the error message on top of the stack (if status is an error) and pop it. */
static int report(lua_State *L, const char *pname, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        l_message(pname, msg ? msg : "(error object is not a string)");
        lua_pop(L, 1);
    }
    return status;
}

/* Message handler: turn the error object into a string and append a traceback. */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Hook installed by the SIGINT handler: stop the running Lua code with an error. */
static void lstop(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
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

/* SIGINT during a call: the next Lua instruction raises "interrupted!"; a second SIGINT before
 * that (e.g. inside a long C computation) terminates the process, as in lua.c. */
static void laction(int sig)
{
    int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
    set_handler(sig, SIG_DFL, NULL);
    cancel_flag = 1;
    lua_sethook(globalL, lstop, flag, 1);
}

/* Call the function below its narg arguments with a traceback handler; SIGINT interrupts it. */
static int docall(lua_State *L, int narg, int nres)
{
    struct sigaction old;
    int base = lua_gettop(L) - narg;
    int status;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    globalL = L;
    cancel_flag = 0;
    set_handler(SIGINT, laction, &old);
    status = lua_pcall(L, narg, nres, base);
    sigaction(SIGINT, &old, NULL);
    if (lua_gethook(L) == lstop)  /* a SIGINT arrived as the call returned */
        lua_sethook(L, NULL, 0, 0);
    lua_remove(L, base);
    return status;
}

static int dochunk(lua_State *L, int status)
{
    if (status == LUA_OK)
        status = docall(L, 0, 0);
    return report(L, PROGNAME, status);
}

static int dostring(lua_State *L, const char *s, const char *name)
{
    return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* ------------------------------------------------------------------ loading the module */

/* The installation prefix: the parent of the directory holding the executable (build/ in the
 * build tree, PREFIX after `make install`). Returns 0 if it cannot be found. */
static int exe_prefix(const char *argv0, char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    char *slash;
    int k;
    if (n > 0 && (size_t)n < size - 1) {
        buf[n] = '\0';
    } else if (argv0 && strchr(argv0, '/') && size >= PATH_MAX && realpath(argv0, buf)) {
        /* found from argv[0] */
    } else {
        return 0;
    }
    for (k = 0; k < 2; k++) {  /* strip the file name, then its directory */
        slash = strrchr(buf, '/');
        if (slash == NULL)
            return 0;
        *slash = '\0';
    }
    return 1;
}

/* package[field] = entries .. ";" .. package[field] */
static void prepend_path(lua_State *L, const char *field, const char *entries)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, field);
    lua_pushfstring(L, "%s;%s", entries, luaL_optstring(L, -1, ""));
    lua_setfield(L, -3, field);
    lua_pop(L, 2);
}

static void set_paths(lua_State *L, const char *argv0)
{
    char p[PATH_MAX];
    if (!exe_prefix(argv0, p, sizeof p))
        return;
    lua_pushfstring(L, "%s/scripts/?.lua;%s/scripts/?/init.lua;"
                       "%s/share/lua/5.4/?.lua;%s/share/lua/5.4/?/init.lua", p, p, p, p);
    prepend_path(L, "path", lua_tostring(L, -1));
    lua_pop(L, 1);
    lua_pushfstring(L, "%s/lib/lua/5.4/?.so", p);
    prepend_path(L, "cpath", lua_tostring(L, -1));
    lua_pop(L, 1);
}

/* package.preload["lieflow.core"] = the statically linked binding; lf = require "lieflow". */
static int load_lieflow(lua_State *L, const char *argv0)
{
    int status;
    set_paths(L, argv0);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_lieflow_core);
    lua_setfield(L, -2, "lieflow.core");
    lua_pop(L, 1);
    lua_pushlightuserdata(L, (void *)&cancel_flag); /* polled by C integrators, see laction */
    lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.cancel");
    lua_getglobal(L, "require");
    lua_pushliteral(L, "lieflow");
    status = docall(L, 1, 1);
    if (status == LUA_OK)
        lua_setglobal(L, "lf");
    return report(L, PROGNAME, status) == LUA_OK;
}

/* ------------------------------------------------------------------ pretty printing */

typedef struct Pretty {
    lua_State *L;
    int parts;      /* stack index of the array of output pieces */
    int seen;       /* stack index of the set of tables being printed (cycle detection) */
    lua_Integer n;  /* number of pieces */
} Pretty;

static const char *const lua_keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", NULL};

static int is_keyword(const char *s)
{
    int i;
    for (i = 0; lua_keywords[i]; i++)
        if (strcmp(s, lua_keywords[i]) == 0)
            return 1;
    return 0;
}

static int is_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(int c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Is s[0..len) a Lua name (not checking keywords)? */
static int is_name(const char *s, size_t len)
{
    size_t i;
    if (len == 0 || !is_name_start((unsigned char)s[0]))
        return 0;
    for (i = 1; i < len; i++)
        if (!is_name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

static void pp_addtop(Pretty *p)  /* append the string on top of the stack and pop it */
{
    lua_rawseti(p->L, p->parts, ++p->n);
}

static void pp_add(Pretty *p, const char *s)
{
    lua_pushstring(p->L, s);
    pp_addtop(p);
}

/* Append the string at idx as a quoted Lua literal on one line. */
static void pp_quoted(Pretty *p, int idx)
{
    lua_State *L = p->L;
    size_t len, i;
    const char *s = lua_tolstring(L, idx, &len);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '"');
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        switch (c) {
        case '"': luaL_addstring(&b, "\\\""); break;
        case '\\': luaL_addstring(&b, "\\\\"); break;
        case '\n': luaL_addstring(&b, "\\n"); break;
        case '\r': luaL_addstring(&b, "\\r"); break;
        case '\t': luaL_addstring(&b, "\\t"); break;
        default:
            if (c < 32 || c == 127) {
                snprintf(esc, sizeof esc, "\\%03d", c);
                luaL_addstring(&b, esc);
            } else {
                luaL_addchar(&b, (char)c);
            }
        }
    }
    luaL_addchar(&b, '"');
    luaL_pushresult(&b);
    pp_addtop(p);
}

static void pp_value(Pretty *p, int idx, int depth, int top);

/* Sort order of table keys: numbers, strings, booleans, then the rest by address. */
static int key_rank(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER: return 0;
    case LUA_TSTRING: return 1;
    case LUA_TBOOLEAN: return 2;
    default: return 3;
    }
}

static int key_less(lua_State *L)
{
    int ra = key_rank(L, 1), rb = key_rank(L, 2);
    int less;
    if (ra != rb)
        less = ra < rb;
    else if (ra <= 1)
        less = lua_compare(L, 1, 2, LUA_OPLT);
    else if (ra == 2)
        less = !lua_toboolean(L, 1) && lua_toboolean(L, 2);
    else
        less = (uintptr_t)lua_topointer(L, 1) < (uintptr_t)lua_topointer(L, 2);
    lua_pushboolean(L, less);
    return 1;
}

/* Sort the array at index keys (the top of the stack) with table.sort and key_less. */
static void sort_keys(lua_State *L, int keys)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, LUA_TABLIBNAME) == LUA_TTABLE
        && lua_getfield(L, -1, "sort") == LUA_TFUNCTION) {
        lua_pushvalue(L, keys);
        lua_pushcfunction(L, key_less);
        lua_call(L, 2, 0);
    }
    lua_settop(L, keys);
}

/* Push a sorted array of the keys of table t that are not in its sequence part 1..n; return
 * their number. */
static lua_Integer collect_keys(lua_State *L, int t, lua_Integer n)
{
    lua_Integer k = 0;
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1)) {
            lua_Integer i = lua_tointeger(L, -1);
            if (i >= 1 && i <= n)
                continue;
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, ++k);
    }
    if (k > 1)
        sort_keys(L, lua_gettop(L));
    return k;
}

/* Append "name = " or "[key] = " for the key at idx. */
static void pp_key(Pretty *p, int idx)
{
    lua_State *L = p->L;
    size_t len;
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, idx, &len);
        if (is_name(s, len) && !is_keyword(s)) {
            lua_pushvalue(L, idx);
            pp_addtop(p);
            pp_add(p, " = ");
            return;
        }
        pp_add(p, "[");
        pp_quoted(p, idx);
    } else {
        pp_add(p, "[");
        luaL_tolstring(L, idx, NULL);
        pp_addtop(p);
    }
    pp_add(p, "] = ");
}

static int table_is_empty(lua_State *L, int t)
{
    lua_pushnil(L);
    if (lua_next(L, t)) {
        lua_pop(L, 2);
        return 0;
    }
    return 1;
}

/* Is the table at t (absolute index) on the path being printed? Mark (on=1) or unmark it. */
static int pp_seen(Pretty *p, int t)
{
    int found;
    lua_pushvalue(p->L, t);
    found = lua_rawget(p->L, p->seen) != LUA_TNIL;
    lua_pop(p->L, 1);
    return found;
}

static void pp_mark(Pretty *p, int t, int on)
{
    lua_pushvalue(p->L, t);
    lua_pushboolean(p->L, on);
    lua_rawset(p->L, p->seen);
}

/* {1, 2, 3} then sorted `key = value` pairs, truncated after PP_MAX_ITEMS entries. */
static void pp_table(Pretty *p, int t, int depth)
{
    lua_State *L = p->L;
    lua_Integer n, nkeys, i, count = 0;
    luaL_checkstack(L, 8, "table nested too deep to print");
    if (pp_seen(p, t)) {
        pp_add(p, "{<cycle>}");
        return;
    }
    if (table_is_empty(L, t)) {
        pp_add(p, "{}");
        return;
    }
    if (depth >= PP_MAX_DEPTH) {
        pp_add(p, "{" ELLIPSIS "}");
        return;
    }
    pp_mark(p, t, 1);
    pp_add(p, "{");
    n = (lua_Integer)lua_rawlen(L, t);
    for (i = 1; i <= n && count < PP_MAX_ITEMS; i++, count++) {
        if (count > 0)
            pp_add(p, ", ");
        lua_rawgeti(L, t, i);
        pp_value(p, lua_gettop(L), depth + 1, 0);
        lua_pop(L, 1);
    }
    nkeys = collect_keys(L, t, n);
    for (i = 1; i <= nkeys && count < PP_MAX_ITEMS; i++, count++) {
        if (count > 0)
            pp_add(p, ", ");
        lua_rawgeti(L, -1, i);
        pp_key(p, lua_gettop(L));
        lua_rawget(L, t);
        pp_value(p, lua_gettop(L), depth + 1, 0);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);  /* keys */
    if (n + nkeys > count)
        pp_add(p, ", " ELLIPSIS);
    pp_add(p, "}");
    pp_mark(p, t, 0);
}

/* Append the value at idx (absolute). Strings are raw at the top level and quoted inside tables;
 * values with __tostring (vec3, mat3, ...) use it; other tables are expanded. */
static void pp_value(Pretty *p, int idx, int depth, int top)
{
    lua_State *L = p->L;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        if (top) {
            lua_pushvalue(L, idx);
            pp_addtop(p);
        } else {
            pp_quoted(p, idx);
        }
        return;
    case LUA_TTABLE:
        if (luaL_getmetafield(L, idx, "__tostring") == LUA_TNIL) {
            pp_table(p, idx, depth);
            return;
        }
        lua_pop(L, 1);
        break;
    default:
        break;
    }
    luaL_tolstring(L, idx, NULL);
    pp_addtop(p);
}

/* Lua function: format all arguments, tab-separated, into one string. */
static int l_format_values(lua_State *L)
{
    int nargs = lua_gettop(L), i;
    Pretty p;
    luaL_Buffer b;
    p.L = L;
    lua_newtable(L);
    p.parts = lua_gettop(L);
    lua_newtable(L);
    p.seen = lua_gettop(L);
    p.n = 0;
    for (i = 1; i <= nargs; i++) {
        if (i > 1)
            pp_add(&p, "\t");
        pp_value(&p, i, 0, 1);
    }
    luaL_buffinit(L, &b);
    for (i = 1; i <= p.n; i++) {
        lua_rawgeti(L, p.parts, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return 1;
}

/* Print the values on the stack (the results of a REPL line) and clear the stack. */
static void print_results(lua_State *L)
{
    int n = lua_gettop(L);
    if (n > 0) {
        lua_pushcfunction(L, l_format_values);
        lua_insert(L, 1);
        if (docall(L, n, 1) == LUA_OK) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            fwrite(s, 1, len, stdout);
            fputc('\n', stdout);
            fflush(stdout);
        } else {
            l_message(NULL, lua_pushfstring(L, "error printing the result (%s)", lua_tostring(L, -1)));
        }
    }
    lua_settop(L, 0);
}

/* ------------------------------------------------------------------ tab completion */

static lua_State *complete_L = NULL;  /* the state the completer inspects (REPL only) */

typedef struct Candidates {
    char **v;
    size_t n, cap, next;
} Candidates;

static Candidates cands = {NULL, 0, 0, 0};

static void cands_clear(void)
{
    size_t i;
    for (i = cands.next; i < cands.n; i++)
        free(cands.v[i]);
    free(cands.v);
    memset(&cands, 0, sizeof cands);
}

/* Add prefix[0..plen) .. name to the candidates. */
static void cands_add(const char *prefix, size_t plen, const char *name)
{
    size_t nlen = strlen(name);
    char *s;
    if (cands.n == cands.cap) {
        size_t cap = cands.cap ? 2 * cands.cap : 32;
        char **v = realloc(cands.v, cap * sizeof *v);
        if (v == NULL)
            return;
        cands.v = v;
        cands.cap = cap;
    }
    s = malloc(plen + nlen + 1);
    if (s == NULL)
        return;
    memcpy(s, prefix, plen);
    memcpy(s + plen, name, nlen + 1);
    cands.v[cands.n++] = s;
}

/* Push the table where the value at idx finds its methods without running code: the metatable's
 * __index if it is a table, else (when __index is a function, as for the binding's userdata) the
 * metatable's `methods` table if there is one. Returns 1 if something was pushed. */
static int push_index_table(lua_State *L, int idx)
{
    int type;
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_pushliteral(L, "__index");
    type = lua_rawget(L, -2);
    if (type == LUA_TFUNCTION) {
        lua_pop(L, 1);
        lua_pushliteral(L, "methods");
        type = lua_rawget(L, -2);
    }
    if (type == LUA_TTABLE) {
        lua_remove(L, -2);
        return 1;
    }
    lua_pop(L, 2);
    return 0;
}

/* Push the field `name` of the value at idx without running metamethods: a raw get, then the
 * chain of __index tables (at most a few levels). Pushes nil if not found. */
static void push_field(lua_State *L, int idx, const char *name, size_t len)
{
    int level;
    idx = lua_absindex(L, idx);
    lua_pushvalue(L, idx);
    for (level = 0; level < 8; level++) {
        if (lua_istable(L, -1)) {
            lua_pushlstring(L, name, len);
            if (lua_rawget(L, -2) != LUA_TNIL) {
                lua_remove(L, -2);
                return;
            }
            lua_pop(L, 1);
        }
        if (!push_index_table(L, -1))
            break;
        lua_remove(L, -2);
    }
    lua_pop(L, 1);
    lua_pushnil(L);
}

/* Add the names (string keys) of the value at idx and of its __index tables that start with
 * word; with methods_only, only function-valued ones. */
static void add_field_names(lua_State *L, int idx, const char *prefix, size_t plen,
                            const char *word, int methods_only)
{
    size_t wlen = strlen(word);
    int level;
    lua_pushvalue(L, idx);
    for (level = 0; level < 8; level++) {
        if (lua_istable(L, -1)) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                size_t klen;
                const char *k;
                if (lua_type(L, -2) == LUA_TSTRING
                    && (!methods_only || lua_type(L, -1) == LUA_TFUNCTION)) {
                    k = lua_tolstring(L, -2, &klen);
                    if (is_name(k, klen) && !is_keyword(k) && strncmp(k, word, wlen) == 0)
                        cands_add(prefix, plen, k);
                }
                lua_pop(L, 1);
            }
        }
        if (!push_index_table(L, -1))
            break;
        lua_remove(L, -2);
    }
    lua_pop(L, 1);
}

/* Fill the candidates for text: a global name, or a chain a.b.c / a.b:c. */
static void collect_candidates(lua_State *L, const char *text)
{
    const char *sep = NULL, *s, *seg;
    int top = lua_gettop(L);
    int i;
    for (s = text; *s; s++)
        if (*s == '.' || *s == ':')
            sep = s;
    if (!lua_checkstack(L, 24))
        return;
    lua_pushglobaltable(L);
    if (sep == NULL) {
        for (i = 0; lua_keywords[i]; i++)
            if (strncmp(lua_keywords[i], text, strlen(text)) == 0)
                cands_add("", 0, lua_keywords[i]);
        add_field_names(L, -1, "", 0, text, 0);
        lua_settop(L, top);
        return;
    }
    for (seg = text; seg < sep; seg = s + 1) {  /* walk a.b.c up to the last separator */
        for (s = seg; s < sep && *s != '.' && *s != ':'; s++)
            continue;
        if ((s < sep && *s == ':') || !is_name(seg, (size_t)(s - seg))) {
            lua_settop(L, top);
            return;
        }
        push_field(L, -1, seg, (size_t)(s - seg));
        lua_remove(L, -2);
    }
    if (!lua_isnil(L, -1))
        add_field_names(L, -1, text, (size_t)(sep - text) + 1, sep + 1, *sep == ':');
    lua_settop(L, top);
}

static char *complete_next(const char *text, int state)
{
    if (state == 0) {
        cands_clear();
        if (complete_L)
            collect_candidates(complete_L, text);
    }
    if (cands.next < cands.n)
        return cands.v[cands.next++];  /* readline frees it */
    cands_clear();
    return NULL;
}

/* List the matches of a.b.c by their last component only (like file names by their base name). */
static void display_matches(char **matches, int n, int max_len)
{
    char **shown = malloc((size_t)(n + 2) * sizeof *shown);
    const char *sep;
    size_t skip = 0;
    int i, width = 0;
    (void)max_len;
    if (shown == NULL)
        return;
    sep = strrchr(matches[1], '.');
    if (strrchr(matches[1], ':') > sep)
        sep = strrchr(matches[1], ':');
    if (sep)
        skip = (size_t)(sep - matches[1]) + 1;
    for (i = 0; i <= n; i++) {
        shown[i] = strlen(matches[i]) >= skip ? matches[i] + skip : matches[i];
        if (i > 0 && (int)strlen(shown[i]) > width)
            width = (int)strlen(shown[i]);
    }
    shown[n + 1] = NULL;
    rl_display_match_list(shown, n, width);
    rl_forced_update_display();
    free(shown);
}

static char **attempt_completion(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1;  /* never fall back to file names */
    rl_completion_append_character = '\0';
    return rl_completion_matches(text, complete_next);
}

/* ------------------------------------------------------------------ reading lines */

enum { LINE_OK, LINE_EOF, LINE_INTR };

static volatile sig_atomic_t got_sigint = 0, got_sigwinch = 0;
static char history_file[PATH_MAX];  /* empty: no history file */
static char *pending_line = NULL;
static int pending_done = 0;

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

static void save_history(void)
{
    if (history_file[0]) {
        write_history(history_file);
        history_truncate_file(history_file, HISTORY_MAX);
    }
    clear_history();
}

static void init_readline(lua_State *L)
{
    static int history_registered = 0;
    const char *home = getenv("HOME");
    complete_L = L;
    rl_readline_name = PROGNAME;
    rl_catch_signals = 0;  /* SIGINT and SIGWINCH are handled in read_readline */
    rl_catch_sigwinch = 0;
    rl_basic_word_break_characters = " \t\n\"\\'><=;+-*/%^~#&|,{}()[]";
    rl_attempted_completion_function = attempt_completion;
    rl_completion_display_matches_hook = display_matches;
    rl_initialize();
    using_history();
    stifle_history(HISTORY_MAX);
    history_file[0] = '\0';
    if (home && home[0]
        && snprintf(history_file, sizeof history_file, "%s/%s", home, HISTORY_NAME)
               < (int)sizeof history_file)
        read_history(history_file);  /* a missing or unreadable file is fine */
    else
        history_file[0] = '\0';
    if (!history_registered) {
        atexit(save_history);
        history_registered = 1;
    }
}

static void add_to_history(const char *line)
{
    HIST_ENTRY *last;
    if (line[0] == '\0')
        return;
    last = history_get(history_base + history_length - 1);
    if (last == NULL || strcmp(last->line, line) != 0)
        add_history(line);
}

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

/* Read one line with readline's callback interface, so that SIGINT (a flag) can be handled
 * without leaving readline in an inconsistent state. */
static int read_readline(const char *prompt, char **out)
{
    sigset_t block, orig, waitmask;
    int status = LINE_OK;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGWINCH);
    sigprocmask(SIG_BLOCK, &block, &orig);
    waitmask = orig;
    sigdelset(&waitmask, SIGINT);
    sigdelset(&waitmask, SIGWINCH);
    got_sigint = 0;
    if (got_sigwinch) {
        got_sigwinch = 0;
        rl_reset_screen_size();
    }
    pending_line = NULL;
    pending_done = 0;
    using_history();
    rl_callback_handler_install(prompt, on_readline_line);
    while (!pending_done) {
        int fd = fileno(rl_instream), r;
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(fd, &fds);
        r = pselect(fd + 1, &fds, NULL, NULL, NULL, &waitmask);
        if (got_sigwinch) {
            got_sigwinch = 0;
            rl_resize_terminal();
        }
        if (got_sigint) {
            cancel_readline();
            status = LINE_INTR;
            break;
        }
        if (r < 0 && errno != EINTR) {
            rl_callback_handler_remove();
            break;
        }
        if (r > 0)
            rl_callback_read_char();
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);
    if (status == LINE_OK) {
        *out = pending_line;
        status = pending_line ? LINE_OK : LINE_EOF;
    }
    return status;
}

/* Read one line from a non-terminal stdin, printing the prompt like `lua -i` does. */
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
            return LINE_INTR;
        }
        return LINE_EOF;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    *out = line;
    return LINE_OK;
}

/* ------------------------------------------------------------------ the REPL */

enum { REPL_EOF = -1, REPL_INTR = -2 };  /* besides the LUA_* status codes */

typedef struct Repl {
    lua_State *L;
    int use_readline;
} Repl;

static const char *get_prompt(lua_State *L, int firstline)
{
    if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TSTRING)
        return lua_tostring(L, -1);
    lua_pop(L, 1);
    return lua_pushstring(L, firstline ? "> " : ">> ");
}

/* Read a line and push it ("=expr" on a first line becomes "return expr"). */
static int push_line(Repl *r, int firstline)
{
    lua_State *L = r->L;
    char *line = NULL;
    const char *prompt = get_prompt(L, firstline);
    int status = r->use_readline ? read_readline(prompt, &line) : read_plain(prompt, &line);
    lua_pop(L, 1);  /* prompt */
    if (status != LINE_OK)
        return status;
    if (firstline && line[0] == '=')
        lua_pushfstring(L, "return %s", line + 1);
    else
        lua_pushstring(L, line);
    free(line);
    return LINE_OK;
}

static void save_line(Repl *r, const char *line)
{
    if (r->use_readline)
        add_to_history(line);
}

/* Try the line on top as an expression: "return <line>;". */
static int add_return(Repl *r)
{
    lua_State *L = r->L;
    const char *line = lua_tostring(L, -1);
    const char *retline = lua_pushfstring(L, "return %s;", line);
    int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
    if (status == LUA_OK) {
        lua_remove(L, -2);
        save_line(r, line);
    } else {
        lua_pop(L, 2);
    }
    return status;
}

/* Is the result of a load a syntax error at the end of the input (an incomplete chunk)? */
static int incomplete(lua_State *L, int status)
{
    static const char mark[] = "<eof>";
    size_t len;
    const char *msg;
    if (status != LUA_ERRSYNTAX)
        return 0;
    msg = lua_tolstring(L, -1, &len);
    return len >= sizeof mark - 1 && strcmp(msg + len - (sizeof mark - 1), mark) == 0;
}

/* Load the chunk at index 1 as statements, reading continuation lines while it is incomplete. */
static int multi_line(Repl *r)
{
    lua_State *L = r->L;
    int status;
    for (;;) {
        size_t len;
        const char *chunk = lua_tolstring(L, 1, &len);
        int st;
        status = luaL_loadbuffer(L, chunk, len, "=stdin");
        if (!incomplete(L, status))
            break;
        st = push_line(r, 0);
        if (st == LINE_INTR)
            return REPL_INTR;
        if (st == LINE_EOF)
            break;  /* report the "<eof>" syntax error */
        lua_remove(L, -2);  /* the error message */
        lua_pushliteral(L, "\n");
        lua_insert(L, -2);
        lua_concat(L, 3);  /* the chunk so far is again alone at index 1 */
    }
    save_line(r, lua_tostring(L, 1));
    return status;
}

/* Read and compile the next input: leaves the function (or the error message) on the stack. */
static int load_line(Repl *r)
{
    lua_State *L = r->L;
    int status;
    lua_settop(L, 0);
    status = push_line(r, 1);
    if (status != LINE_OK)
        return status == LINE_EOF ? REPL_EOF : REPL_INTR;
    status = add_return(r);
    if (status != LUA_OK)
        status = multi_line(r);
    lua_remove(L, 1);
    return status;
}

static void print_banner(void)
{
    printf("%s %s \xE2\x80\x94 %s; `lf` is loaded (Tab completes, Ctrl-D exits)\n",
           PROGNAME, LIEFLOW_VERSION, LUA_RELEASE);
    fflush(stdout);
}

static void do_repl(lua_State *L)
{
    Repl r;
    struct sigaction old_int, old_winch;
    int status;
    r.L = L;
    r.use_readline = isatty(STDIN_FILENO);
    print_banner();
    set_handler(SIGINT, on_sigint, &old_int);
    set_handler(SIGWINCH, on_sigwinch, &old_winch);
    if (r.use_readline)
        init_readline(L);
    while ((status = load_line(&r)) != REPL_EOF) {
        if (status == REPL_INTR)
            continue;
        if (status == LUA_OK)
            status = docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK)
            print_results(L);
        else
            report(L, NULL, status);
    }
    lua_settop(L, 0);
    complete_L = NULL;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGWINCH, &old_winch, NULL);
    if (!r.use_readline || !readline_ended_line())
        fputc('\n', stdout);
    fflush(stdout);
}

/* ------------------------------------------------------------------ script mode */

typedef struct Options {
    int interactive;  /* -i */
    int has_e;        /* some -e */
    int warnings;     /* -W */
    int script;       /* argv index of the script (or "-"), 0 if none */
    int optlim;       /* first argv index that is not an option */
    int bad;          /* argv index of a bad option */
} Options;

enum { ARGS_RUN, ARGS_VERSION, ARGS_HELP, ARGS_ERROR };

/* Parse the options like lua.c; the first non-option argument is the script. */
static int collect_args(int argc, char **argv, Options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        o->bad = i;
        if (a[0] != '-') {
            o->script = i;
            break;
        }
        if (strcmp(a, "--version") == 0)
            return ARGS_VERSION;
        if (strcmp(a, "--help") == 0)
            return ARGS_HELP;
        switch (a[1]) {
        case '-':  /* "--": the next argument is the script */
            if (a[2] != '\0')
                return ARGS_ERROR;
            o->script = (i + 1 < argc) ? i + 1 : 0;
            o->optlim = i + 1;
            return ARGS_RUN;
        case '\0':  /* "-": the script is stdin */
            o->script = i;
            break;
        case 'e':
        case 'l':
            if (a[1] == 'e')
                o->has_e = 1;
            if (a[2] == '\0') {
                i++;
                if (i >= argc || argv[i][0] == '-')
                    return ARGS_ERROR;
            }
            continue;
        case 'i':
        case 'v':
        case 'h':
        case 'W':
            if (a[2] != '\0')
                return ARGS_ERROR;
            if (a[1] == 'v')
                return ARGS_VERSION;
            if (a[1] == 'h')
                return ARGS_HELP;
            if (a[1] == 'i')
                o->interactive = 1;
            else
                o->warnings = 1;
            continue;
        default:
            return ARGS_ERROR;
        }
        break;  /* only "-" gets here */
    }
    o->optlim = o->script > 0 ? o->script : argc;
    return ARGS_RUN;
}

static void print_bad_option(const char *opt)
{
    if (opt[0] == '-' && (opt[1] == 'e' || opt[1] == 'l') && opt[2] == '\0')
        fprintf(stderr, "%s: '%s' needs argument\n", PROGNAME, opt);
    else
        fprintf(stderr, "%s: unrecognized option '%s'\n", PROGNAME, opt);
}

/* arg[0] = script (or the program when there is none), arg[1..] = its arguments, negative
 * indices for the interpreter and the options (as in lua). */
static void create_arg_table(lua_State *L, char **argv, int argc, int script)
{
    int i;
    lua_createtable(L, argc > script + 1 ? argc - script - 1 : 0, script + 1);
    for (i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

/* require(mod) into the global mod; "g=mod" names the global g. */
static int dolibrary(lua_State *L, const char *spec)
{
    const char *eq = strchr(spec, '=');
    const char *modname = eq ? eq + 1 : spec;
    size_t glen = eq ? (size_t)(eq - spec) : strlen(spec);
    int status;
    lua_getglobal(L, "require");
    lua_pushstring(L, modname);
    status = docall(L, 1, 1);
    if (status == LUA_OK) {
        lua_pushglobaltable(L);
        lua_pushlstring(L, spec, glen);
        lua_pushvalue(L, -3);
        lua_settable(L, -3);
        lua_pop(L, 2);
    }
    return report(L, PROGNAME, status);
}

/* Run the -e and -l options in order. */
static int run_args(lua_State *L, char **argv, int optlim)
{
    int i;
    for (i = 1; i < optlim; i++) {
        int option = argv[i][1];
        if (option == 'e' || option == 'l') {
            const char *extra = argv[i] + 2;
            int status;
            if (*extra == '\0')
                extra = argv[++i];
            status = option == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
            if (status != LUA_OK)
                return 0;
        }
    }
    return 1;
}

/* Push arg[1..#arg] (the script's `...`); return how many. */
static int push_args(lua_State *L)
{
    int i, n;
    if (lua_getglobal(L, "arg") != LUA_TTABLE)
        luaL_error(L, "'arg' is not a table");
    n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (i = 1; i <= n; i++)
        lua_rawgeti(L, -i, i);
    lua_remove(L, -i);
    return n;
}

static int handle_script(lua_State *L, char **argv, int script)
{
    const char *fname = argv[script];
    int status;
    if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
        fname = NULL;  /* stdin */
    status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
        int n = push_args(L);
        status = docall(L, n, LUA_MULTRET);
    }
    return report(L, PROGNAME, status);
}

/* Everything after the option parsing, in protected mode. Returns true on success. */
static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = (char **)lua_touserdata(L, 2);
    const Options *o = (const Options *)lua_touserdata(L, 3);
    luaL_checkversion(L);
    luaL_openlibs(L);
    create_arg_table(L, argv, argc, o->script);
    lua_gc(L, LUA_GCRESTART);
    lua_gc(L, LUA_GCGEN, 0, 0);
    if (o->warnings)
        lua_warning(L, "@on", 0);
    if (!load_lieflow(L, argc > 0 ? argv[0] : NULL))
        return 0;
    if (!run_args(L, argv, o->optlim))
        return 0;
    if (o->script > 0 && handle_script(L, argv, o->script) != LUA_OK)
        return 0;
    if (o->interactive) {
        do_repl(L);
    } else if (o->script == 0 && !o->has_e) {
        if (isatty(STDIN_FILENO))
            do_repl(L);
        else if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK)
            return 0;
    }
    lua_pushboolean(L, 1);
    return 1;
}

int main(int argc, char **argv)
{
    Options o;
    lua_State *L;
    int status, ok;
    switch (collect_args(argc, argv, &o)) {
    case ARGS_VERSION:
        print_version();
        return EXIT_SUCCESS;
    case ARGS_HELP:
        print_usage(stdout);
        return EXIT_SUCCESS;
    case ARGS_ERROR:
        print_bad_option(argv[o.bad]);
        print_usage(stderr);
        return EXIT_FAILURE;
    default:
        break;
    }
    L = luaL_newstate();
    if (L == NULL) {
        l_message(PROGNAME, "cannot create state: not enough memory");
        return EXIT_FAILURE;
    }
    lua_gc(L, LUA_GCSTOP);
    lua_pushcfunction(L, pmain);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    lua_pushlightuserdata(L, &o);
    status = lua_pcall(L, 3, 1, 0);
    ok = lua_toboolean(L, -1);
    report(L, PROGNAME, status);
    lua_close(L);
    return (status == LUA_OK && ok) ? EXIT_SUCCESS : EXIT_FAILURE;
}
