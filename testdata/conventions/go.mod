module ctxprof.test/conventions

go 1.17
