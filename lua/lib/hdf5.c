/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — HDF5 files (the C side of scripts/lieflow/hdf5.lua: traj:write_hdf5,
 * lf.run{stream = "run.h5"}, lf.read_hdf5). Built with HDF5 when the Makefile finds libhdf5
 * (LF_HAVE_HDF5); without it core.hdf5 is false and the functions say how to get it.
 *
 *   core.h5_create(path, columns, units, who) -> w: a new file with one 1-D float64 dataset per
 *       column, /columns/NAME (chunked, 4096 values a chunk, shuffled and deflate-compressed when
 *       the HDF5 library has deflate, unlimited length), its attribute "units" where units[NAME] is
 *       given. It is written to a temporary file beside path (".NAME.tmp-PID-N") and appears at
 *       path only when w:commit succeeds.
 *       w:append(x1, ..., xn): one row (a value per column), buffered: written a chunk at a time.
 *       w:commit(attrs) -> path: the buffered rows written, attrs (string -> string | number |
 *       boolean) set on the root group, the file closed and renamed to path.
 *       w:abort(); __gc and __close abort an uncommitted file (its temporary file removed).
 *       Every error (a full disk, an unwritable directory) names `who`, the path and the reason
 *       (the OS's, else HDF5's) and removes the temporary file: no partial file is left at path.
 *   core.h5_read(path, who) -> {attrs = {...}, columns = {names}, data = {name = array}, units = {...}}:
 *       the root attributes, and the 1-D datasets of /columns in the order of the root attribute
 *       "columns" (names joined by commas) when there is one, else in name order. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bind.h"
#include "lib/open.h"

#ifdef LF_HAVE_HDF5
#include <hdf5.h>

#define LFB_H5W "lf.h5writer"
#define H5_CHUNK 4096
#define H5_MAX_ROWS ((hsize_t)1 << 28) /* a dataset longer than this is refused when read */
#define H5_MAX_COMPACT 10000           /* links and attributes kept in object headers (checksummed) */

typedef struct {
    hid_t file, group;
    int ncol, nbuf;  /* columns; rows buffered */
    hsize_t nrows;   /* rows in the file */
    hid_t *dset;     /* one per column */
    double *buf;     /* column-major: column c's buffered rows at buf[c * H5_CHUNK] */
    char *path, *tmp, *who;
} h5w;

/* The deepest message on HDF5's error stack (what went wrong, not where). */
static herr_t last_desc(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    if (e->desc && e->desc[0]) snprintf((char *)data, 256, "%s", e->desc);
    return 0;
}

/* The reason of a failed HDF5 call: errno when the OS said something, else HDF5's message. */
static const char *reason(int err, char *buf)
{
    if (err != 0) return strerror(err);
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, last_desc, buf);
    return buf[0] ? buf : "HDF5 error";
}

/* Close the writer's ids (quietly), remove the temporary file, free what it holds. */
static void h5w_close(h5w *w, int remove_tmp)
{
    for (int c = 0; w->dset && c < w->ncol; c++)
        if (w->dset[c] >= 0) H5Dclose(w->dset[c]);
    if (w->group >= 0) H5Gclose(w->group);
    if (w->file >= 0) H5Fclose(w->file);
    w->group = w->file = H5I_INVALID_HID;
    if (remove_tmp && w->tmp) unlink(w->tmp);
    free(w->dset), free(w->buf), free(w->path), free(w->tmp), free(w->who);
    w->dset = NULL, w->buf = NULL, w->path = w->tmp = w->who = NULL;
    w->ncol = 0;
}

/* Abort w and raise "who: what 'path': reason" (err: errno of the failure, 0 for HDF5's message). */
static int h5w_fail(lua_State *L, h5w *w, const char *what, int err)
{
    char buf[256];
    const char *why = reason(err, buf);
    lua_pushfstring(L, "%s: %s '%s': %s", w->who ? w->who : "hdf5", what, w->path ? w->path : "?", why);
    h5w_close(w, 1);
    return lua_error(L);
}

static char *dup_or_null(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

/* The temporary file beside the target: "DIR/.BASE.tmp-PID-N". */
static char *temp_name(const char *path)
{
    static unsigned counter;
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path) + 64;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%.*s.%s.tmp-%ld-%u", (int)dirlen, path, slash ? slash + 1 : path, (long)getpid(), counter++);
    return t;
}

/* The target path: refused when it is a directory or not a regular file (a device, a FIFO); a
 * symbolic link is followed (rename would replace the link). Sets w->path. */
static void set_target(lua_State *L, h5w *w, const char *path)
{
    struct stat st, lst;
    char resolved[PATH_MAX];
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            w->path = dup_or_null(path);
            h5w_fail(L, w, "cannot write", EISDIR);
        }
        if (!S_ISREG(st.st_mode))
            luaL_error(L, "%s: cannot write '%s': not a regular file (an HDF5 file is written beside it and renamed)",
                       w->who, path);
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && realpath(path, resolved)) path = resolved;
    }
    w->path = dup_or_null(path);
    w->tmp = temp_name(path);
    if (!w->path || !w->tmp) h5w_fail(L, w, "cannot write", ENOMEM);
}

/* A 1-D, extendible, chunked (and compressed) float64 dataset /columns/name. */
static hid_t create_column(hid_t group, const char *name)
{
    hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = H5_CHUNK;
    hid_t space = H5Screate_simple(1, &dims, &maxdims), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = H5I_INVALID_HID;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0) {
        if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, 4);
        }
        H5Pset_fletcher32(dcpl); /* each stored chunk checksummed: a damaged file is an error, not numbers */
        d = H5Dcreate2(group, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return d;
}

/* attribute name = string value (fixed length, NUL-terminated) on object obj */
static herr_t set_string_attr(hid_t obj, const char *name, const char *value, size_t len)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
    herr_t st = -1;
    if (type >= 0 && space >= 0 && H5Tset_size(type, len > 0 ? len : 1) >= 0 && H5Tset_strpad(type, H5T_STR_NULLPAD) >= 0
        && H5Tset_cset(type, H5T_CSET_UTF8) >= 0) {
        a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) st = H5Awrite(a, type, len > 0 ? value : "");
    }
    if (a >= 0) H5Aclose(a);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return st;
}

/* attribute name = number (float64, or int64 for an integer) on object obj */
static herr_t set_number_attr(hid_t obj, const char *name, int isint, long long i, double x)
{
    hid_t space = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
    herr_t st = -1;
    if (space >= 0) a = H5Acreate2(obj, name, isint ? H5T_STD_I64LE : H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) st = isint ? H5Awrite(a, H5T_NATIVE_LLONG, &i) : H5Awrite(a, H5T_NATIVE_DOUBLE, &x);
    if (a >= 0) H5Aclose(a);
    if (space >= 0) H5Sclose(space);
    return st;
}

/* core.h5_create(path, columns, units, who) -> writer */
static int l_h5_create(lua_State *L)
{
    size_t plen;
    const char *path = luaL_checklstring(L, 1, &plen);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *who = luaL_optstring(L, 4, "write_hdf5");
    lua_settop(L, 4); /* the writer goes to 5 */
    if (strlen(path) != plen) return luaL_error(L, "%s: the path contains a NUL byte", who);
    int ncol = (int)luaL_len(L, 2);
    if (ncol < 1 || ncol > 10000) return luaL_error(L, "%s: 1 to 10000 columns expected, got %d", who, ncol);
    h5w *w = lua_newuserdatauv(L, sizeof *w, 0);
    memset(w, 0, sizeof *w);
    w->file = w->group = H5I_INVALID_HID;
    luaL_setmetatable(L, LFB_H5W);
    w->who = dup_or_null(who);
    w->dset = malloc(sizeof *w->dset * (size_t)ncol);
    w->buf = malloc(sizeof *w->buf * (size_t)ncol * H5_CHUNK);
    if (!w->who || !w->dset || !w->buf) return luaL_error(L, "%s: out of memory", who);
    for (int c = 0; c < ncol; c++) w->dset[c] = H5I_INVALID_HID;
    w->ncol = ncol;
    set_target(L, w, path);
    errno = 0;
    /* Checksums on everything the reader parses, so that a damaged file is refused by HDF5 instead of
     * parsed (HDF5 1.10 can crash on a damaged heap): the file format of HDF5 1.10 (superblock, object
     * headers and chunk indexes with checksums; such files need HDF5 1.10 or later to read), the root's
     * attributes and the links of /columns kept in the object headers (compact: the fractal heaps of
     * dense storage are not checksummed), and each chunk's Fletcher-32 (create_column). */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (fapl >= 0) H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
    if (fcpl >= 0) H5Pset_attr_phase_change(fcpl, H5_MAX_COMPACT, H5_MAX_COMPACT);
    if (gcpl >= 0) H5Pset_link_phase_change(gcpl, H5_MAX_COMPACT, H5_MAX_COMPACT);
    w->file = H5Fcreate(w->tmp, H5F_ACC_EXCL, fcpl >= 0 ? fcpl : H5P_DEFAULT, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (w->file >= 0)
        w->group = H5Gcreate2(w->file, "columns", H5P_DEFAULT, gcpl >= 0 ? gcpl : H5P_DEFAULT, H5P_DEFAULT);
    if (fapl >= 0) H5Pclose(fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (gcpl >= 0) H5Pclose(gcpl);
    if (w->file < 0) return h5w_fail(L, w, "cannot create", errno);
    if (w->group < 0) return h5w_fail(L, w, "cannot write", errno);
    for (int c = 0; c < ncol; c++) {
        lua_geti(L, 2, c + 1);
        const char *name = lua_tostring(L, -1);
        if (!name || !name[0] || strchr(name, '/') || strcmp(name, ".") == 0) {
            lua_pushfstring(L, "%s: column %d (%s) cannot name an HDF5 dataset", w->who, c + 1,
                            name ? name : luaL_typename(L, -1));
            h5w_close(w, 1);
            return lua_error(L);
        }
        errno = 0;
        w->dset[c] = create_column(w->group, name);
        if (w->dset[c] < 0) return h5w_fail(L, w, "cannot write", errno);
        if (lua_istable(L, 3) && lua_getfield(L, 3, name) == LUA_TSTRING) {
            size_t ulen;
            const char *u = lua_tolstring(L, -1, &ulen);
            if (set_string_attr(w->dset[c], "units", u, ulen) < 0) return h5w_fail(L, w, "cannot write", errno);
        }
        lua_settop(L, 5);
    }
    return 1;
}

static h5w *check_writer(lua_State *L)
{
    h5w *w = luaL_checkudata(L, 1, LFB_H5W);
    if (w->file < 0) luaL_error(L, "hdf5 writer: the file was already committed or aborted");
    return w;
}

/* Write the buffered rows at the end of every column. */
static void h5w_flush(lua_State *L, h5w *w)
{
    if (w->nbuf == 0) return;
    hsize_t start = w->nrows, count = (hsize_t)w->nbuf, total = w->nrows + (hsize_t)w->nbuf;
    for (int c = 0; c < w->ncol; c++) {
        errno = 0;
        hid_t fs = H5I_INVALID_HID, ms = H5Screate_simple(1, &count, NULL);
        herr_t st = H5Dset_extent(w->dset[c], &total);
        if (st >= 0) fs = H5Dget_space(w->dset[c]);
        if (st >= 0 && fs >= 0 && ms >= 0) st = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
        if (st >= 0 && fs >= 0 && ms >= 0) st = H5Dwrite(w->dset[c], H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, w->buf + (size_t)c * H5_CHUNK);
        int err = errno;
        if (fs >= 0) H5Sclose(fs);
        if (ms >= 0) H5Sclose(ms);
        if (st < 0 || fs < 0 || ms < 0) h5w_fail(L, w, "writing", err);
    }
    w->nrows = total;
    w->nbuf = 0;
}

/* w:append(x1, ..., xn) */
static int l_h5w_append(lua_State *L)
{
    h5w *w = check_writer(L);
    if (lua_gettop(L) - 1 != w->ncol)
        return luaL_error(L, "%s: a row of %d values expected, got %d", w->who, w->ncol, lua_gettop(L) - 1);
    for (int c = 0; c < w->ncol; c++) w->buf[(size_t)c * H5_CHUNK + (size_t)w->nbuf] = luaL_checknumber(L, c + 2);
    if (++w->nbuf == H5_CHUNK) h5w_flush(L, w);
    return 0;
}

/* w:commit(attrs) -> path */
static int l_h5w_commit(lua_State *L)
{
    h5w *w = check_writer(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    h5w_flush(L, w);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        herr_t st = 0;
        errno = 0;
        if (name && lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char *v = lua_tolstring(L, -1, &len);
            st = set_string_attr(w->file, name, v, len);
        } else if (name && lua_type(L, -1) == LUA_TNUMBER) {
            st = set_number_attr(w->file, name, lua_isinteger(L, -1), (long long)lua_tointeger(L, -1), lua_tonumber(L, -1));
        } else if (name && lua_type(L, -1) == LUA_TBOOLEAN) {
            st = set_number_attr(w->file, name, 1, lua_toboolean(L, -1), 0);
        }
        if (st < 0) return h5w_fail(L, w, "writing", errno);
        lua_pop(L, 1);
    }
    errno = 0;
    if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) return h5w_fail(L, w, "writing", errno);
    for (int c = 0; c < w->ncol; c++) {
        herr_t st = H5Dclose(w->dset[c]);
        w->dset[c] = H5I_INVALID_HID;
        if (st < 0) return h5w_fail(L, w, "writing", errno);
    }
    herr_t st = H5Gclose(w->group);
    w->group = H5I_INVALID_HID;
    if (st >= 0) st = H5Fclose(w->file);
    w->file = H5I_INVALID_HID;
    if (st < 0) return h5w_fail(L, w, "writing", errno);
    if (rename(w->tmp, w->path) != 0) return h5w_fail(L, w, "cannot rename the temporary file to", errno);
    lua_pushstring(L, w->path);
    h5w_close(w, 0);
    return 1;
}

/* w:abort(), __gc, __close: an uncommitted file is removed */
static int l_h5w_abort(lua_State *L)
{
    h5w *w = luaL_checkudata(L, 1, LFB_H5W);
    h5w_close(w, 1);
    return 0;
}

/* Push the value of attribute a: a string, an integer or a number (nil for other types and shapes) */
static void push_attr(lua_State *L, hid_t a)
{
    hid_t type = H5Aget_type(a), space = H5Aget_space(a);
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    long long i;
    double x;
    size_t len = cls == H5T_STRING ? H5Tget_size(type) : 0;
    char *s = cls == H5T_STRING && !H5Tis_variable_str(type) && len < (1u << 24) ? malloc(len + 1) : NULL;
    if (n == 1 && s && H5Aread(a, type, s) >= 0) {
        s[len] = '\0';
        lua_pushstring(L, s);
    } else if (n == 1 && cls == H5T_INTEGER && H5Aread(a, H5T_NATIVE_LLONG, &i) >= 0)
        lua_pushinteger(L, (lua_Integer)i);
    else if (n == 1 && cls == H5T_FLOAT && H5Aread(a, H5T_NATIVE_DOUBLE, &x) >= 0)
        lua_pushnumber(L, x);
    else
        lua_pushnil(L);
    free(s);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
}

/* H5Aiterate2 callback: table at the top of the stack [name] = value */
static herr_t read_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    lua_State *L = data;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return 0;
    push_attr(L, a);
    lua_setfield(L, -2, name);
    H5Aclose(a);
    return 0;
}

/* H5Ewalk2 callback (walking upward: the innermost error first): keeps the first description */
static herr_t first_error(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    if (n == 0 && e->desc && e->desc[0]) snprintf(buf, 160, "%s", e->desc);
    return 0;
}

/* Why the last HDF5 call failed, from the error stack: " (HDF5: incorrect metadata checksum ...)" */
static const char *h5_reason(char buf[200])
{
    char desc[160] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, desc);
    if (!desc[0]) return "";
    snprintf(buf, 200, " (HDF5: %s)", desc);
    return buf;
}

/* NULL when the file holds storage for all n values of dataset d, else what is wrong: every chunk a
 * chunked layout needs (H5Dget_num_chunks counts those its index finds; H5Dget_space_status cannot
 * tell, it compares compressed bytes with the full size), the whole extent of a contiguous one; a
 * compact one is whole. Other layouts (virtual, external files) are not stored in this file. */
static const char *unstored(hid_t d, hid_t space, hid_t type, hsize_t n, char why[200])
{
    const char *bad = "damaged: its values are not stored in the file (an unknown layout)";
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) return "damaged: cannot read its layout";
    switch (H5Pget_layout(dcpl)) {
    case H5D_CHUNKED: {
        hsize_t c = 0, have = 0;
        if (H5Pget_chunk(dcpl, 1, &c) != 1 || c == 0) bad = "damaged: a chunked layout without a chunk size";
        else if (H5Dget_num_chunks(d, space, &have) < 0) {
            bad = "damaged: cannot read its chunk index";
            h5_reason(why);
        } else if (have < n / c + (n % c != 0))
            bad = "damaged: its size claims more values than its chunks hold";
        else bad = NULL;
        break;
    }
    case H5D_CONTIGUOUS: {
        size_t size = H5Tget_size(type);
        if (H5Pget_external_count(dcpl) != 0) bad = "its values are in another file (refused)";
        else if (size == 0 || H5Dget_storage_size(d) / size < n) bad = "damaged: its size claims more values than the file stores";
        else bad = NULL;
        break;
    }
    case H5D_COMPACT: bad = NULL; break;
    default: break;
    }
    H5Pclose(dcpl);
    return bad;
}

/* Push the values of the 1-D float dataset /columns/name as an array, or return an error message
 * (and HDF5's reason in why). */
static const char *read_column(lua_State *L, hid_t group, const char *name, char why[200])
{
    why[0] = '\0';
    htri_t has = H5Lexists(group, name, H5P_DEFAULT);
    hid_t d = has > 0 ? H5Dopen2(group, name, H5P_DEFAULT) : H5I_INVALID_HID;
    if (d < 0) {
        h5_reason(why);
        return has == 0 ? "no such dataset" : "damaged: cannot open it";
    }
    hid_t space = H5Dget_space(d), type = H5Dget_type(d);
    const char *bad = NULL;
    hsize_t n = 0;
    if (space < 0 || type < 0 || H5Sget_simple_extent_ndims(space) != 1 || H5Tget_class(type) != H5T_FLOAT)
        bad = "not a 1-D dataset of floating-point numbers";
    else if (H5Sget_simple_extent_dims(space, &n, NULL) < 0 || n > H5_MAX_ROWS)
        bad = "too many values";
    /* lieflow writes every value of a column; a dimension that claims more than the file stores
     * (a damaged size field: unallocated chunks would read as fill values, megabytes from nothing)
     * is refused before anything is allocated */
    if (!bad && n > 0) bad = unstored(d, space, type, n, why);
    double *x = bad || n == 0 ? NULL : malloc(sizeof *x * (size_t)n);
    if (!bad && n > 0 && !x) bad = "out of memory";
    if (!bad && n > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) {
        bad = "damaged: cannot read its values"; /* a chunk's checksum, its compressed stream */
        h5_reason(why);
    }
    if (!bad) {
        lua_createtable(L, (int)n, 0);
        for (hsize_t i = 0; i < n; i++) {
            lua_pushnumber(L, x[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_newtable(L);
        H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, NULL, read_attr, L); /* its units */
    }
    free(x);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    H5Dclose(d);
    return bad;
}

/* H5Literate2 callback: the names of /columns, appended to the array at the top of the stack */
static herr_t list_name(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g, (void)info;
    lua_State *L = data;
    lua_pushstring(L, name);
    lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
    return 0;
}

/* core.h5_read(path, who) -> {attrs =, columns =, data =, units =} */
static int l_h5_read(lua_State *L)
{
    size_t plen;
    const char *path = luaL_checklstring(L, 1, &plen);
    const char *who = luaL_optstring(L, 2, "read_hdf5");
    lua_settop(L, 2); /* the result goes to 3 */
    if (strlen(path) != plen) return luaL_error(L, "%s: the path contains a NUL byte", who);
    struct stat st;
    if (stat(path, &st) != 0) return luaL_error(L, "%s: cannot open '%s': %s", who, path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return luaL_error(L, "%s: cannot read '%s': not a regular file", who, path);
    char why[200];
    if (H5Fis_hdf5(path) <= 0) return luaL_error(L, "%s: '%s' is not an HDF5 file%s", who, path, h5_reason(why));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return luaL_error(L, "%s: cannot open '%s' as HDF5: damaged%s", who, path, h5_reason(why));
    htri_t has = H5Lexists(f, "columns", H5P_DEFAULT);
    hid_t g = has > 0 ? H5Gopen2(f, "columns", H5P_DEFAULT) : H5I_INVALID_HID;
    if (g < 0) {
        h5_reason(why);
        H5Fclose(f);
        if (has == 0) return luaL_error(L, "%s: '%s' has no group /columns: not a lieflow trajectory", who, path);
        return luaL_error(L, "%s: '%s' is damaged: cannot open its group /columns%s", who, path, why);
    }
    lua_newtable(L); /* result: 3 */
    lua_newtable(L);
    H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, read_attr, L);
    lua_setfield(L, 3, "attrs");
    lua_newtable(L); /* columns: 4 */
    lua_getfield(L, 3, "attrs");
    if (lua_getfield(L, -1, "columns") == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1), *e;
        for (; *s; s = *e ? e + 1 : e) {
            e = strchr(s, ',');
            if (!e) e = s + strlen(s);
            lua_pushlstring(L, s, (size_t)(e - s));
            lua_rawseti(L, 4, (lua_Integer)luaL_len(L, 4) + 1);
        }
    }
    lua_pop(L, 2);
    if (luaL_len(L, 4) == 0) H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, list_name, L);
    lua_newtable(L); /* data: 5 */
    lua_newtable(L); /* units: 6 */
    for (lua_Integer i = 1; i <= luaL_len(L, 4); i++) {
        lua_rawgeti(L, 4, i);
        const char *name = lua_tostring(L, -1);
        const char *bad = *name ? read_column(L, g, name, why) : "a column without a name: not a lieflow trajectory";
        if (bad) {
            lua_pushfstring(L, "%s: '%s': column '%s': %s%s", who, path, name, bad, why);
            H5Gclose(g), H5Fclose(f);
            return lua_error(L);
        }
        lua_getfield(L, -1, "units"); /* the dataset's attributes, then its array */
        lua_setfield(L, 6, name);
        lua_pop(L, 1);
        lua_setfield(L, 5, name);
        lua_pop(L, 1);
    }
    H5Gclose(g), H5Fclose(f);
    lua_setfield(L, 3, "units");
    lua_setfield(L, 3, "data");
    lua_setfield(L, 3, "columns");
    return 1;
}

static void open_writer_meta(lua_State *L)
{
    luaL_newmetatable(L, LFB_H5W);
    const luaL_Reg meta[] = {{"__gc", l_h5w_abort}, {"__close", l_h5w_abort}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    const luaL_Reg methods[] = {{"append", l_h5w_append}, {"commit", l_h5w_commit}, {"abort", l_h5w_abort}, {NULL, NULL}};
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

void lfb_open_hdf5(lua_State *L)
{
    unsigned maj, min, rel;
    /* No clean-up of HDF5 at exit: a file whose close failed (a full disk) stays open inside HDF5, and
     * HDF5 1.10's exit handler crashes closing it again. Its temporary file is removed already; the
     * process ends anyway. (A host that initialized HDF5 itself keeps its own choice.) */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors come back as messages, not printed by HDF5 */
    H5get_libversion(&maj, &min, &rel);
    lua_pushfstring(L, "%d.%d.%d", (int)maj, (int)min, (int)rel);
    lua_setfield(L, -2, "hdf5");
    const luaL_Reg fns[] = {{"h5_create", l_h5_create}, {"h5_read", l_h5_read}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    open_writer_meta(L);
}

#else /* built without HDF5 */

static int l_no_hdf5(lua_State *L)
{
    return luaL_error(L, "lieflow was built without HDF5 (install libhdf5-dev, e.g. make deps-opt, and rebuild)");
}

void lfb_open_hdf5(lua_State *L)
{
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "hdf5");
    lua_pushcfunction(L, l_no_hdf5);
    lua_setfield(L, -2, "h5_create");
    lua_pushcfunction(L, l_no_hdf5);
    lua_setfield(L, -2, "h5_read");
}

#endif
