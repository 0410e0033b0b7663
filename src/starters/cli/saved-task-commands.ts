// The `saved-task` and `schedule` commands of the starter CLI.
import type { Instruction } from '../../browserai';
import type { BrowserTaskResult } from '../../workflows/input';
import type { BrowserTasks } from '../tasks';
import { SavedTasks, type OverlapPolicy, type ScheduleSpecInput } from '../saved-tasks';

export interface SavedTaskCliValues {
  name?: string;
  instruction?: string[];
  project?: string;
  country?: string;
  city?: string;
  zipcode?: string;
  cron?: string;
  timezone?: string;
  overlap?: string;
  paused?: boolean;
  note?: string;
  awaitable?: boolean;
  id?: string;
  wait?: boolean;
}

export async function savedTaskCommand(
  tasks: BrowserTasks,
  command: 'saved-task' | 'schedule',
  sub: string | undefined,
  name: string | undefined,
  values: SavedTaskCliValues,
  fail: (message: string) => never,
  print: (result: BrowserTaskResult) => number,
): Promise<number> {
  const saved = new SavedTasks(tasks.client, tasks.taskQueue);
  const needName = () => name ?? values.name ?? fail(`${command} ${sub} needs a NAME`);
  const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  const spec = (): ScheduleSpecInput => ({
    cron: values.cron ?? fail('give --cron, e.g. --cron "0 9 * * MON-FRI"'),
    timezone: values.timezone,
    overlap: values.overlap as OverlapPolicy | undefined,
    paused: values.paused,
    note: values.note,
  });

  switch (`${command} ${sub}`) {
    case 'saved-task create': {
      const instructions: Instruction[] = (values.instruction ?? []).map((action) => ({ action }));
      const definition = {
        name: needName(),
        instructions,
        project: values.project ?? '',
        geoLocation: { country: values.country ?? '', city: values.city, zipcode: values.zipcode },
      };
      out(await saved.create(definition, values.cron ? { schedule: spec() } : {}));
      return 0;
    }
    case 'saved-task get':
      out(await saved.get(needName()));
      return 0;
    case 'saved-task list':
      out(await saved.list());
      return 0;
    case 'saved-task run': {
      const overrides = {
        ...(values.country
          ? { geoLocation: { country: values.country, city: values.city, zipcode: values.zipcode } }
          : {}),
        ...(values.awaitable ? { awaitable: true } : {}),
      };
      const handle = await saved.run(needName(), overrides, { workflowId: values.id });
      console.log(`Started workflow ${handle.workflowId}`);
      return values.wait ? print(await handle.result()) : 0;
    }
    case 'schedule create':
      out(await saved.schedule(needName(), spec()));
      return 0;
    case 'schedule list':
      out(await saved.listSchedules());
      return 0;
    case 'schedule describe':
      out(await saved.describeSchedule(needName()));
      return 0;
    case 'schedule pause':
      await saved.pause(needName(), values.note);
      console.log('Paused.');
      return 0;
    case 'schedule unpause':
      await saved.unpause(needName(), values.note);
      console.log('Unpaused.');
      return 0;
    case 'schedule trigger':
      await saved.trigger(needName());
      console.log('Triggered: a run starts now (unless the overlap policy skips it).');
      return 0;
    case 'schedule update':
      await saved.updateCron(needName(), spec().cron, values.timezone);
      out(await saved.describeSchedule(needName()));
      return 0;
    case 'schedule delete':
      await saved.deleteSchedule(needName());
      console.log('Deleted.');
      return 0;
    default:
      return fail(`unknown command "${command} ${sub ?? ''}"`);
  }
}
