// exc.cpp — a C++ exception thrown in thrower() unwinds through level2()
// and level1() to catcher().
#include <stdexcept>

__attribute__((noinline)) void thrower(int v)
{
	if (v >= 0)
		throw std::runtime_error("ptgen");
}

__attribute__((noinline)) int level2(int v)
{
	thrower(v);
	return v + 2;
}

__attribute__((noinline)) int level1(int v)
{
	int r = level2(v + 1);
	return r * 3;
}

__attribute__((noinline)) int catcher(int v)
{
	try {
		return level1(v);
	} catch (const std::runtime_error &) {
		return -1;
	}
}

int main(int argc, char **)
{
	return catcher(argc) == -1 ? 0 : 1;
}
