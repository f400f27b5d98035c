// th_cxx: C++ whose demangled names hold '<', '>', '&', quotes, '::',
// operators and templates, for the flame graph escaping test (t620; built
// there with g++). Usage: th_cxx MS: burns about MS ms of CPU in each of
// Grid<int, 3>::operator(), Acc<std::vector<long>>::operator+= (a
// reference parameter: '&' in the name), std::map-keyed work in
// churn<std::pair<char, char const*>>, and operator<<(Sink&, Grid const&).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long g_sink;

static double cpu_ms()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

template <typename T, int N> struct Grid {
	T cells[N];
	NOINLINE T operator()(double until) const
	{
		T sum = 0;
		while (cpu_ms() < until)
			for (int i = 0; i < 20000; i++)
				sum = sum * 31 + cells[i % N] + i;
		g_sink = sum;
		return sum;
	}
};

template <typename C> struct Acc {
	C items;
	NOINLINE Acc &operator+=(const double &until)
	{
		while (cpu_ms() < until)
			for (int i = 0; i < 20000; i++)
				items[i % items.size()] += i;
		g_sink += items[0];
		return *this;
	}
};

template <typename K> NOINLINE unsigned long churn(std::map<K, int> &m, double until)
{
	unsigned long n = 0;
	while (cpu_ms() < until)
		for (int i = 0; i < 2000; i++)
			n += m.size() + (unsigned long)m.begin()->second + (unsigned long)i;
	g_sink += n;
	return n;
}

struct Sink {};
NOINLINE Sink &operator<<(Sink &s, const Grid<int, 3> &g)
{
	double until = cpu_ms() + g.cells[0];
	while (cpu_ms() < until)
		for (int i = 0; i < 20000; i++)
			g_sink = g_sink * 7 + (unsigned long)i;
	return s;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 100;
	Grid<int, 3> g = { { 1, 2, 3 } };
	g(cpu_ms() + ms);
	Acc<std::vector<long>> acc = { std::vector<long>(16, 1) };
	acc += cpu_ms() + ms;
	std::map<std::pair<char, const char *>, int> m;
	m[{ 'a', "x" }] = 1;
	churn(m, cpu_ms() + ms);
	Sink s;
	Grid<int, 3> again = { { (int)ms, 0, 0 } };
	s << again;
	std::printf("cxx done\n");
	return 0;
}
