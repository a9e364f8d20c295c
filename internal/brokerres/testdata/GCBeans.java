// GCBeans prints each garbage collector MXBean's name, count and time (ms)
// after some garbage and a System.gc(): brokerres's test runs it with each
// collector to check which beans time pauses (TestPauseCollectors).
import java.lang.management.*;
public class GCBeans {
  public static void main(String[] a) throws Exception {
    Object[] keep = new Object[1000];
    for (int i = 0; i < 3_000_000; i++) { keep[i % 1000] = new byte[1024]; }
    System.gc();
    Thread.sleep(200);
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
      System.out.println(b.getName() + "\t" + b.getCollectionCount() + "\t" + b.getCollectionTime());
  }
}
