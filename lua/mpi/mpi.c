/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow.mpi — the few MPI calls lf.ensemble needs to spread members over the ranks of an MPI job
 * and gather their results (scripts/lieflow/ensemble.lua). Built against OpenMPI as
 * build/lua/lieflow/mpi.so when libopenmpi-dev is installed; `require "lieflow.mpi"`.
 *
 *   mpi.init()                -> rank, size (MPI_Init_thread once; later calls return the same)
 *   mpi.initialized()         -> boolean
 *   mpi.rank(), mpi.size()
 *   mpi.send(dest, tag, s)    -> true: a byte string of any length (its length, then 1 GiB chunks)
 *   mpi.recv(src, tag)        -> s: what mpi.send(..., tag, s) on rank src sent
 *   mpi.bcast(s | nil, root)  -> s: root's string on every rank
 *   mpi.barrier()
 *   mpi.wtime()               -> seconds (MPI_Wtime)
 *   mpi.processor_name()      -> string
 *   mpi.abort([code])         -> MPI_Abort(MPI_COMM_WORLD, code): ends every rank of the job
 *   mpi.finalize()            -> MPI_Finalize now (otherwise it happens at exit, see below)
 *
 * The end of the job: once initialized, MPI is finalized when the process exits (on_exit), after
 * the Lua state is closed. An exit with status 0 calls MPI_Finalize; a non-zero status (a Lua error
 * in the script, os.exit(1)) calls MPI_Abort instead, so that the other ranks do not wait forever
 * for a rank that failed. The module pins itself in memory (RTLD_NODELETE) so that the exit handler
 * outlives lua_close's dlclose, and makes libmpi's symbols global for OpenMPI's plugins. Forked
 * lf.ensemble workers leave with _exit and never touch MPI. Errors of MPI calls raise Lua errors with
 * MPI's message (the error handler of MPI_COMM_WORLD is set to MPI_ERRORS_RETURN). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <mpi.h>

#define CHUNK ((size_t)1 << 30)

int luaopen_lieflow_mpi(lua_State *L);

static int exit_hook_set = 0;

static int mpi_check(lua_State *L, int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return luaL_error(L, "lieflow.mpi: %s failed: %s", what, msg);
}

static int is_init(void)
{
    int a = 0, b = 0;
    MPI_Initialized(&a);
    MPI_Finalized(&b);
    return a && !b;
}

static void need_init(lua_State *L)
{
    if (!is_init()) luaL_error(L, "lieflow.mpi: MPI is not initialized (call mpi.init() first)");
}

static void at_exit(int status, void *arg)
{
    (void)arg;
    if (!is_init()) return;
    if (status == 0) MPI_Finalize();
    else MPI_Abort(MPI_COMM_WORLD, status);
}

static int l_init(lua_State *L)
{
    if (!is_init()) {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized) return luaL_error(L, "lieflow.mpi: MPI was finalized and cannot be started again");
        int provided;
        mpi_check(L, MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (!exit_hook_set) {
            on_exit(at_exit, NULL);
            exit_hook_set = 1;
        }
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lua_pushinteger(L, rank);
    lua_pushinteger(L, size);
    return 2;
}

static int l_initialized(lua_State *L)
{
    lua_pushboolean(L, is_init());
    return 1;
}

static int l_rank(lua_State *L)
{
    need_init(L);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    lua_pushinteger(L, rank);
    return 1;
}

static int l_size(lua_State *L)
{
    need_init(L);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lua_pushinteger(L, size);
    return 1;
}

static int check_rank(lua_State *L, int idx)
{
    lua_Integer r = luaL_checkinteger(L, idx);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (r < 0 || r >= size) return luaL_error(L, "lieflow.mpi: rank %d out of range (0 .. %d)", (int)r, size - 1);
    return (int)r;
}

static int check_tag(lua_State *L, int idx)
{
    lua_Integer t = luaL_checkinteger(L, idx);
    if (t < 0 || t > 32767) return luaL_error(L, "lieflow.mpi: tag %d out of range (0 .. 32767)", (int)t);
    return (int)t;
}

static int l_send(lua_State *L)
{
    need_init(L);
    int dest = check_rank(L, 1), tag = check_tag(L, 2);
    size_t n;
    const char *s = luaL_checklstring(L, 3, &n);
    uint64_t len = n;
    mpi_check(L, MPI_Send(&len, 1, MPI_UINT64_T, dest, tag, MPI_COMM_WORLD), "MPI_Send (length)");
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t k = n - off < CHUNK ? n - off : CHUNK;
        mpi_check(L, MPI_Send(s + off, (int)k, MPI_BYTE, dest, tag, MPI_COMM_WORLD), "MPI_Send");
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_recv(lua_State *L)
{
    need_init(L);
    int src = check_rank(L, 1), tag = check_tag(L, 2);
    uint64_t len;
    mpi_check(L, MPI_Recv(&len, 1, MPI_UINT64_T, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (length)");
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, (size_t)len);
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t k = len - off < CHUNK ? len - off : CHUNK;
        mpi_check(L, MPI_Recv(p + off, (int)k, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    }
    luaL_pushresultsize(&b, (size_t)len);
    return 1;
}

static int l_bcast(lua_State *L)
{
    need_init(L);
    int root = check_rank(L, 2), rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = 0;
    const char *s = NULL;
    if (rank == root) s = luaL_checklstring(L, 1, &n);
    uint64_t len = n;
    mpi_check(L, MPI_Bcast(&len, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast (length)");
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, (size_t)len);
    if (rank == root) memcpy(p, s, (size_t)len);
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t k = len - off < CHUNK ? len - off : CHUNK;
        mpi_check(L, MPI_Bcast(p + off, (int)k, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    }
    luaL_pushresultsize(&b, (size_t)len);
    return 1;
}

static int l_barrier(lua_State *L)
{
    need_init(L);
    mpi_check(L, MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    return 0;
}

static int l_wtime(lua_State *L)
{
    lua_pushnumber(L, MPI_Wtime());
    return 1;
}

static int l_processor_name(lua_State *L)
{
    need_init(L);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    lua_pushlstring(L, name, (size_t)len);
    return 1;
}

static int l_abort(lua_State *L)
{
    int code = (int)luaL_optinteger(L, 1, 1);
    if (!is_init()) exit(code);
    MPI_Abort(MPI_COMM_WORLD, code);
    return 0;
}

static int l_finalize(lua_State *L)
{
    if (is_init()) mpi_check(L, MPI_Finalize(), "MPI_Finalize");
    return 0;
}

int luaopen_lieflow_mpi(lua_State *L)
{
    /* Stay loaded until the process exits (the exit handler above lives here), and make this module
     * and libmpi global: OpenMPI's plugins look up libmpi's symbols. */
    Dl_info info;
    if (dladdr((void *)luaopen_lieflow_mpi, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE | RTLD_NOLOAD);
    static const luaL_Reg fns[] = {{"init", l_init},
                                   {"initialized", l_initialized},
                                   {"rank", l_rank},
                                   {"size", l_size},
                                   {"send", l_send},
                                   {"recv", l_recv},
                                   {"bcast", l_bcast},
                                   {"barrier", l_barrier},
                                   {"wtime", l_wtime},
                                   {"processor_name", l_processor_name},
                                   {"abort", l_abort},
                                   {"finalize", l_finalize},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    lua_pushfstring(L, "MPI %d.%d", major, minor);
    lua_setfield(L, -2, "version");
    return 1;
}
