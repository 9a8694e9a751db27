// sluice CLI (placeholder until the scenarios issue): see README.
#include <cstdio>
int main() { std::puts("sluice"); return 0; }
