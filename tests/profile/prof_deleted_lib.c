/*
 * A shared library prof_target (deleted mode) dlopens from a copy that it
 * then deletes: its mapping shows as "... (deleted)" in /proc/self/maps.
 */
int deleted_hot(int n);

__attribute__((noinline)) int deleted_hot(int n)
{
	unsigned x = (unsigned)n | 1;
	for (int i = 0; i < 20000; i++)
		x = x * 1103515245u + 12345u;
	return (int)x;
}
