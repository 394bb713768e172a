/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Tab completion in the REPL (readline's completion hooks, installed by lua/exe/repl.c):
 * globals, keywords, a.b.c chains and a:b methods, from the fields of tables and of their __index
 * tables, without running code; objects whose __index is a function list their names through
 * getmetatable(obj).__lf_fields(obj) (vec3, mat3, integrators; after ':' only the names whose value
 * is a function are offered). Matches are listed by their last component, like file names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include <lauxlib.h>
#include <lua.h>

#include "exe/repl.h"

static lua_State *complete_L = NULL;  /* the state the completer inspects (while the REPL runs) */

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

/* Push the array of names getmetatable(v).__lf_fields(v) returns for the value v at idx (the
 * completion protocol of objects whose __index is a function); 0 (nothing pushed) if there is no
 * such function, it fails or returns no table. */
static int push_lf_fields(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (luaL_getmetafield(L, idx, "__lf_fields") == LUA_TNIL)
        return 0;
    if (lua_type(L, -1) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

static int index_value(lua_State *L)  /* (v, k) -> v[k] */
{
    lua_gettable(L, 1);
    return 1;
}

/* Push v[name] for the value v at idx, running its metamethods; nil if that raises an error. */
static void push_indexed(lua_State *L, int idx, const char *name, size_t len)
{
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, index_value);
    lua_pushvalue(L, idx);
    lua_pushlstring(L, name, len);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* Is name[0..len) one of the strings of the array on top of the stack? */
static int list_has(lua_State *L, const char *name, size_t len)
{
    lua_Integer i, n = (lua_Integer)lua_rawlen(L, -1);
    for (i = 1; i <= n; i++) {
        size_t klen;
        const char *k;
        lua_rawgeti(L, -1, i);
        k = lua_tolstring(L, -1, &klen);
        lua_pop(L, 1);
        if (k && klen == len && memcmp(k, name, len) == 0)
            return 1;
    }
    return 0;
}

/* Push the field `name` of the value at idx: a raw get, then the chain of __index tables (at most
 * a few levels), without running code; else, if the value lists the name in __lf_fields, v[name].
 * Pushes nil if not found. */
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
    if (push_lf_fields(L, idx)) {
        int listed = list_has(L, name, len);
        lua_pop(L, 1);
        if (listed) {
            push_indexed(L, idx, name, len);
            return;
        }
    }
    lua_pushnil(L);
}

/* Add the names (string keys) of the value at idx and of its __index tables that start with
 * word, and the names its __lf_fields lists; with methods_only, only function-valued ones. */
static void add_field_names(lua_State *L, int idx, const char *prefix, size_t plen,
                            const char *word, int methods_only)
{
    size_t wlen = strlen(word);
    int level;
    idx = lua_absindex(L, idx);
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
    if (push_lf_fields(L, idx)) {
        lua_Integer i, n = (lua_Integer)lua_rawlen(L, -1);
        for (i = 1; i <= n; i++) {
            size_t klen;
            const char *k;
            if (lua_rawgeti(L, -1, i) == LUA_TSTRING) {
                k = lua_tolstring(L, -1, &klen);
                if (is_name(k, klen) && !is_keyword(k) && strncmp(k, word, wlen) == 0) {
                    int ok = 1;
                    if (methods_only) {
                        push_indexed(L, idx, k, klen);
                        ok = lua_type(L, -1) == LUA_TFUNCTION;
                        lua_pop(L, 1);
                    }
                    if (ok)
                        cands_add(prefix, plen, k);
                }
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
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

void lf_complete_init(lua_State *L)
{
    complete_L = L;
    rl_basic_word_break_characters = " \t\n\"\\'><=;+-*/%^~#&|,{}()[]";
    rl_attempted_completion_function = attempt_completion;
    rl_completion_display_matches_hook = display_matches;
}

void lf_complete_done(void)
{
    complete_L = NULL;
}
