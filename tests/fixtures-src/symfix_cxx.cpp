// symfix_cxx.cpp — a namespaced C++ method, so test_symfile can check that
// symbols come back demangled ("sptdfx::Widget::method(int)").
namespace sptdfx {
struct Widget {
	int base;
	__attribute__((noinline)) int method(int x);
};

int Widget::method(int x)
{
	return base + x * 7;
}
} // namespace sptdfx

extern "C" int symfix_cxx_entry(int x)
{
	sptdfx::Widget w{ x };
	return w.method(x);
}
