// The `saved-task` and `schedule` commands of the starter CLI. Arguments are checked before the
// connection to Temporal is made: bad input is a usage error (exit 2) whether or not the server is up.
import type { Instruction } from '../browserai';
import type { BrowserTaskResult } from '../contract/input';
import { InvalidInputError } from '../contract/input-problems';
import { savedTaskNameProblems, savedTaskProblems } from '../contract/saved-task-input';
import type { BrowserTasks } from '../starters/tasks';
import { SavedTasks, scheduleProblems, type OverlapPolicy, type ScheduleSpecInput } from '../starters/saved-tasks';

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

/** Every `saved-task` and `schedule` sub-command. */
const SUB_COMMANDS = new Set([
  'saved-task create',
  'saved-task get',
  'saved-task list',
  'saved-task run',
  'schedule create',
  'schedule list',
  'schedule describe',
  'schedule pause',
  'schedule unpause',
  'schedule trigger',
  'schedule update',
  'schedule delete',
]);

export async function savedTaskCommand(
  connect: () => Promise<BrowserTasks>,
  command: 'saved-task' | 'schedule',
  sub: string | undefined,
  name: string | undefined,
  values: SavedTaskCliValues,
  fail: (message: string) => never,
  print: (result: BrowserTaskResult) => number,
): Promise<number> {
  const which = `${command} ${sub}`;
  if (!SUB_COMMANDS.has(which)) return fail(`unknown command "${command} ${sub ?? ''}"`);
  const refuse = (problems: string[]) => {
    if (problems.length > 0) throw new InvalidInputError(problems);
  };
  // The name, given and well formed, before anything is sent.
  const needName = () => {
    const given = name ?? values.name ?? fail(`${command} ${sub} needs a NAME`);
    refuse(savedTaskNameProblems(given));
    return given;
  };
  const spec = (): ScheduleSpecInput => {
    const checked = {
      cron: values.cron ?? fail('give --cron, e.g. --cron "0 9 * * MON-FRI"'),
      timezone: values.timezone,
      overlap: values.overlap as OverlapPolicy | undefined,
      paused: values.paused,
      note: values.note,
    };
    refuse(scheduleProblems(checked));
    return checked;
  };
  const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  const saved = async () => {
    const tasks = await connect();
    return new SavedTasks(tasks.client, tasks.taskQueue);
  };

  switch (which) {
    case 'saved-task create': {
      const instructions: Instruction[] = (values.instruction ?? []).map((action) => ({ action }));
      const definition = {
        name: needName(),
        instructions,
        project: values.project ?? '',
        geoLocation: { country: values.country ?? '', city: values.city, zipcode: values.zipcode },
      };
      refuse(savedTaskProblems(definition));
      const schedule = values.cron ? { schedule: spec() } : {};
      out(await (await saved()).create(definition, schedule));
      return 0;
    }
    case 'saved-task get': {
      const named = needName();
      out(await (await saved()).get(named));
      return 0;
    }
    case 'saved-task list':
      out(await (await saved()).list());
      return 0;
    case 'saved-task run': {
      const named = needName();
      const overrides = {
        ...(values.country
          ? { geoLocation: { country: values.country, city: values.city, zipcode: values.zipcode } }
          : {}),
        ...(values.awaitable ? { awaitable: true } : {}),
      };
      const handle = await (await saved()).run(named, overrides, { workflowId: values.id });
      console.log(`Started workflow ${handle.workflowId}`);
      return values.wait ? print(await handle.result()) : 0;
    }
    case 'schedule create': {
      const [named, checked] = [needName(), spec()];
      out(await (await saved()).schedule(named, checked));
      return 0;
    }
    case 'schedule list':
      out(await (await saved()).listSchedules());
      return 0;
    case 'schedule describe': {
      const named = needName();
      out(await (await saved()).describeSchedule(named));
      return 0;
    }
    case 'schedule pause': {
      const named = needName();
      await (await saved()).pause(named, values.note);
      console.log('Paused.');
      return 0;
    }
    case 'schedule unpause': {
      const named = needName();
      await (await saved()).unpause(named, values.note);
      console.log('Unpaused.');
      return 0;
    }
    case 'schedule trigger': {
      const named = needName();
      await (await saved()).trigger(named);
      console.log('Triggered: a run starts now (unless the overlap policy skips it).');
      return 0;
    }
    case 'schedule update': {
      const [named, checked] = [needName(), spec()];
      const schedules = await saved();
      await schedules.updateCron(named, checked.cron, values.timezone);
      out(await schedules.describeSchedule(named));
      return 0;
    }
    case 'schedule delete': {
      const named = needName();
      await (await saved()).deleteSchedule(named);
      console.log('Deleted.');
      return 0;
    }
    default:
      return fail(`unknown command "${which}"`);
  }
}
