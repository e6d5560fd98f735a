/* starpu_cusparse.c — StarPU 1.3.10's cuSPARSE glue, rewritten for starwave (scripts/setup
 * copies it over src/drivers/cuda/starpu_cusparse.c; LGPL-2.1+ like the file it replaces):
 * cuSPARSE is resolved with dlopen when an application first asks for it
 * (starpu_cusparse_init) instead of being linked into libstarpu (see starpu_cublas.c). */
#include <common/config.h>

#include <starpu.h>
#include <starpu_cuda.h>
#include <core/workers.h>

#ifdef HAVE_LIBCUSPARSE
#include <dlfcn.h>
#include <cusparse.h>

#define STARWAVE_STR2(x) #x
#define STARWAVE_STR(x) STARWAVE_STR2(x)

typedef cusparseStatus_t (*create_fn)(cusparseHandle_t *);
typedef cusparseStatus_t (*destroy_fn)(cusparseHandle_t);
typedef cusparseStatus_t (*set_stream_fn)(cusparseHandle_t, cudaStream_t);

static create_fn cusparse_create;
static destroy_fn cusparse_destroy;
static set_stream_fn cusparse_set_stream;
static int cusparse_state; /* 0: not tried, 1: resolved, -1: unavailable */
static cusparseHandle_t cusparse_handles[STARPU_NMAXWORKERS];
static cusparseHandle_t main_handle;
static starpu_pthread_mutex_t mutex = STARPU_PTHREAD_MUTEX_INITIALIZER;

static int resolve_cusparse(void)
{
	STARPU_PTHREAD_MUTEX_LOCK(&mutex);
	if (cusparse_state == 0)
	{
		const char *names[] = { "libcusparse.so." STARWAVE_STR(CUSPARSE_VER_MAJOR), "libcusparse.so" };
		void *lib = NULL;
		unsigned i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
			lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
		if (lib)
		{
			cusparse_create = (create_fn) dlsym(lib, "cusparseCreate");
			cusparse_destroy = (destroy_fn) dlsym(lib, "cusparseDestroy");
			cusparse_set_stream = (set_stream_fn) dlsym(lib, "cusparseSetStream");
		}
		cusparse_state = lib && cusparse_create && cusparse_destroy && cusparse_set_stream ? 1 : -1;
		if (cusparse_state < 0)
			_STARPU_DISP("Warning: cuSPARSE could not be loaded (%s): starpu_cusparse_get_local_handle() will return NULL\n", lib ? "missing symbols" : dlerror());
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&mutex);
	return cusparse_state > 0;
}

static void init_cusparse_func(void *args STARPU_ATTRIBUTE_UNUSED)
{
	int workerid = starpu_worker_get_id_check();
	if (cusparse_create(&cusparse_handles[workerid]) != CUSPARSE_STATUS_SUCCESS)
		cusparse_handles[workerid] = NULL;
	else
		cusparse_set_stream(cusparse_handles[workerid], starpu_cuda_get_local_stream());
}

static void shutdown_cusparse_func(void *args STARPU_ATTRIBUTE_UNUSED)
{
	int workerid = starpu_worker_get_id_check();
	if (cusparse_handles[workerid])
		cusparse_destroy(cusparse_handles[workerid]);
	cusparse_handles[workerid] = NULL;
}
#endif

void starpu_cusparse_init(void)
{
#ifdef HAVE_LIBCUSPARSE
	if (!resolve_cusparse())
		return;
	starpu_execute_on_each_worker(init_cusparse_func, NULL, STARPU_CUDA);
	if (cusparse_create(&main_handle) != CUSPARSE_STATUS_SUCCESS)
		main_handle = NULL;
#endif
}

void starpu_cusparse_shutdown(void)
{
#ifdef HAVE_LIBCUSPARSE
	if (cusparse_state <= 0)
		return;
	starpu_execute_on_each_worker(shutdown_cusparse_func, NULL, STARPU_CUDA);
	if (main_handle)
		cusparse_destroy(main_handle);
	main_handle = NULL;
#endif
}

#ifdef HAVE_LIBCUSPARSE
cusparseHandle_t starpu_cusparse_get_local_handle(void)
{
	int workerid = starpu_worker_get_id();
	if (workerid >= 0)
		return cusparse_handles[workerid];
	else
		return main_handle;
}
#endif
