#include "compiler/cuda/compilation_provider.h"

int main() { return 0; }
