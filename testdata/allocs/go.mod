module ctxprof.test/allocs

go 1.19
