/* bench/run's start-up rows: a program that does nothing, linked statically
 * (cc -static), beside the dynamically linked /bin/true. */
int main(void)
{
	return 0;
}
