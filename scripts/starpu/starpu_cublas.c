/* starpu_cublas.c — StarPU 1.3.10's cuBLAS glue, rewritten for starwave (scripts/setup
 * copies it over src/drivers/cuda/starpu_cublas.c before building StarPU; LGPL-2.1+ like
 * the file it replaces).
 *
 * StarPU links cuBLAS into libstarpu, and loading cuBLAS (with cuBLASLt) costs every
 * process ~0.4 s and ~250 MB before it does anything, whether or not a codelet ever calls
 * cuBLAS (starwave's never do). Here cuBLAS is resolved with dlopen when an application
 * first asks for it (starpu_cublas_init), so libstarpu no longer needs it at link time.
 * Only the cuBLAS v2 API is used: CUDA 13 dropped the legacy one (cublas.h). */
#include <starpu.h>
#include <starpu_cuda.h>
#include <common/config.h>
#include <core/workers.h>

#ifdef STARPU_USE_CUDA
#include <dlfcn.h>
#include <cublas_v2.h>
#include <starpu_cublas_v2.h>

#define STARWAVE_STR2(x) #x
#define STARWAVE_STR(x) STARWAVE_STR2(x)

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);

static create_fn cublas_create;
static destroy_fn cublas_destroy;
static set_stream_fn cublas_set_stream;
static int cublas_state; /* 0: not tried, 1: resolved, -1: unavailable */
static cublasHandle_t cublas_handles[STARPU_NMAXWORKERS];
static cublasHandle_t main_handle;
static starpu_pthread_mutex_t mutex = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* Loads cuBLAS and its three entry points once; 1 on success. */
static int resolve_cublas(void)
{
	STARPU_PTHREAD_MUTEX_LOCK(&mutex);
	if (cublas_state == 0)
	{
		const char *names[] = { "libcublas.so." STARWAVE_STR(CUBLAS_VER_MAJOR), "libcublas.so" };
		void *lib = NULL;
		unsigned i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
			lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
		if (lib)
		{
			cublas_create = (create_fn) dlsym(lib, "cublasCreate_v2");
			cublas_destroy = (destroy_fn) dlsym(lib, "cublasDestroy_v2");
			cublas_set_stream = (set_stream_fn) dlsym(lib, "cublasSetStream_v2");
		}
		cublas_state = lib && cublas_create && cublas_destroy && cublas_set_stream ? 1 : -1;
		if (cublas_state < 0)
			_STARPU_DISP("Warning: cuBLAS could not be loaded (%s): starpu_cublas_get_local_handle() will return NULL\n", lib ? "missing symbols" : dlerror());
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&mutex);
	return cublas_state > 0;
}

static void init_cublas_func(void *args STARPU_ATTRIBUTE_UNUSED)
{
	int workerid = starpu_worker_get_id_check();
	if (cublas_create(&cublas_handles[workerid]) != CUBLAS_STATUS_SUCCESS)
		cublas_handles[workerid] = NULL;
	else
		cublas_set_stream(cublas_handles[workerid], starpu_cuda_get_local_stream());
}

static void shutdown_cublas_func(void *args STARPU_ATTRIBUTE_UNUSED)
{
	int workerid = starpu_worker_get_id_check();
	if (cublas_handles[workerid])
		cublas_destroy(cublas_handles[workerid]);
	cublas_handles[workerid] = NULL;
}
#endif

void starpu_cublas_init(void)
{
#ifdef STARPU_USE_CUDA
	if (!resolve_cublas())
		return;
	starpu_execute_on_each_worker(init_cublas_func, NULL, STARPU_CUDA);
	if (cublas_create(&main_handle) != CUBLAS_STATUS_SUCCESS)
		main_handle = NULL;
#endif
}

void starpu_cublas_shutdown(void)
{
#ifdef STARPU_USE_CUDA
	if (cublas_state <= 0)
		return;
	starpu_execute_on_each_worker(shutdown_cublas_func, NULL, STARPU_CUDA);
	if (main_handle)
		cublas_destroy(main_handle);
	main_handle = NULL;
#endif
}

/* The v2 handles carry their worker's stream (set in starpu_cublas_init): nothing to do. */
void starpu_cublas_set_stream(void)
{
}

#ifdef STARPU_USE_CUDA
cublasHandle_t starpu_cublas_get_local_handle(void)
{
	int workerid = starpu_worker_get_id();
	if (workerid >= 0)
		return cublas_handles[workerid];
	else
		return main_handle;
}
#endif
