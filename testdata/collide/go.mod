module ctxprof.test/collide

go 1.17
