module ctxprof.test/cpubench

go 1.17
