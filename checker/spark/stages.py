"""One Spark map stage per level, built through py4j: the previous level's shuffle in, the next level's shuffle out.

Kept apart because it is the only code that reaches into PySpark's internals (with a fallback to the public route);
the driver only asks it for the next stage and runs it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from kraftcheck.checker.spark.shards import emit


def owner(key: int) -> int:
    """The partitioner: a record's key already is the partition that owns it."""
    return key


class Stages:
    """Builds each level's stage: a Python function over the previous level's shuffle, writing the next shuffle.

    PySpark's public route (``mapPartitionsWithIndex(...).partitionBy(...)``) makes about forty py4j calls a level,
    which on a busy driver costs more than the stage itself; this builds the same JVM objects (PythonRDD ->
    PairwiseRDD -> partitionBy -> valueOfPair) with a dozen, reusing the converted environment and partitioner.  If
    this PySpark's internals differ, it falls back to the public route.
    """

    def __init__(self, sc: Any, partitions: int) -> None:
        self.sc = sc
        self.P = partitions
        self.fast = True
        try:
            from py4j.java_collections import ListConverter, MapConverter

            jvm, client = sc._jvm, sc._gateway._gateway_client
            self.PythonRDD = jvm.PythonRDD
            self.Function = jvm.SimplePythonFunction
            self.Pairwise = jvm.PairwiseRDD
            self.partitioner = jvm.PythonPartitioner(partitions, id(owner))
            self.threshold = int(jvm.PythonUtils.getBroadcastThreshold(sc._jsc))
            self.env = MapConverter().convert(sc.environment, client)
            self.includes = ListConverter().convert(list(sc._python_includes), client)
            self.no_broadcasts = ListConverter().convert([], client)
            self.jsc = sc._jsc.sc()
        except Exception:
            self.fast = False

    def next_stage(self, prev: Any, task: Any, spill_dir: str | None = None) -> tuple[Any, Any]:
        """(the next level's input RDD, the shuffle dependency whose map stage runs ``task``)."""
        if self.fast:
            try:
                return self._fast(prev, task, spill_dir)
            except Exception:
                self.fast = False
        rdd = prev.mapPartitionsWithIndex(task).partitionBy(self.P, owner)
        return rdd, rdd._jrdd.rdd().dependencies().head().rdd().dependencies().head()

    def _fast(self, prev: Any, task: Any, spill_dir: str | None) -> tuple[Any, Any]:
        from pyspark.core.rdd import RDD
        from pyspark.serializers import BatchedSerializer, CloudPickleSerializer, CPickleSerializer, NoOpSerializer

        sc = self.sc
        ser = CloudPickleSerializer()
        command = ser.dumps((partial(emit, task, spill_dir), None, prev._jrdd_deserializer, NoOpSerializer()))
        broadcasts = self.no_broadcasts
        if len(command) > self.threshold:
            from py4j.java_collections import ListConverter

            b = sc.broadcast(command)
            command = ser.dumps(b)
            broadcasts = ListConverter().convert([b._jbroadcast], sc._gateway._gateway_client)
            sc._pickled_broadcast_vars.clear()
        func = self.Function(bytearray(command), self.env, self.includes, sc.pythonExec, sc.pythonVer, broadcasts,
                             sc._javaAccumulator)
        python_rdd = self.PythonRDD(prev._jrdd.rdd(), func, False, False)
        shuffled = self.Pairwise(python_rdd).asJavaPairRDD().partitionBy(self.partitioner)
        values = self.PythonRDD.valueOfPair(shuffled)
        return RDD(values, sc, BatchedSerializer(CPickleSerializer())), shuffled.rdd().dependencies().head()

    def run(self, dep: Any) -> None:
        (self.jsc if self.fast else self.sc._jsc.sc()).submitMapStage(dep).get()
