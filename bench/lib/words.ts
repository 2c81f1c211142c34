/** Vocabulary and names for synthetic chat content. */

const COMMON = `the to and a of is it that in for this on you we be with have not are was but
can will just so if do at think what about like there they get would all one should or out
can't up more some when time now then know also yes no maybe here how from need because see
make really which good still work going looks sure thanks ok want use new right only today
first could did other way also let try change any tomorrow review test fix merge branch build
release deploy server client issue bug patch update config error log check run tests docs
meeting question idea plan week team later sorry done great nice agree point case data user
users message messages channel topic thread search query index table cache memory latency
request response endpoint api version feature design proposal draft comment comments commit
pull upstream downstream backend frontend mobile desktop browser network database migration
schema performance benchmark profile regression alert monitoring dashboard metrics graph
timeout retry queue worker job cron backup restore storage disk cpu load traffic spike
incident outage postmortem rollback hotfix staging production environment secret token
permission access role admin owner member guest invite signup login password account
settings notification email push stream subscriber subscription mention reaction emoji
upload file image link preview markdown render editor draft keyboard shortcut layout theme
dark light color font mobile tablet android ios linux windows mac terminal shell script
python typescript javascript node express knex sqlite mariadb mysql postgres redis nginx
docker kubernetes cluster node pod container image registry pipeline workflow action
coffee lunch weekend holiday vacation travel conference talk slides demo video call`;

/** A distinctive word searched for by the search scenario; it sits at a fixed Zipf rank. */
export const SEARCH_WORD = 'deployment';
/** Its rank in the vocabulary: with Zipf(1.05) and ~15 words a message, about 1% of messages contain it. */
export const SEARCH_WORD_RANK = 150;

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'to',
  'vas',
  'qui',
  'nor',
  'del',
  'sa',
  'po',
  'tik',
  'gal',
  'um',
  'ber',
  'zen',
  'ri',
  'fo',
  'lan',
  'dus',
];

/** The vocabulary, most frequent first: common words, then made-up ones for the long tail. */
export function vocabulary(size: number): string[] {
  const words = [...new Set(COMMON.split(/\s+/).filter(Boolean))];
  const out = words.filter((w) => w !== SEARCH_WORD);
  out.splice(SEARCH_WORD_RANK, 0, SEARCH_WORD);
  for (let i = 0; out.length < size; i++) {
    let n = i;
    let w = '';
    do {
      w += SYLLABLES[n % SYLLABLES.length];
      n = Math.floor(n / SYLLABLES.length);
    } while (n > 0);
    if (w.length >= 4) out.push(w + 'o');
  }
  return out.slice(0, size);
}

export const FIRST_NAMES = `Ada Alan Alice Amir Ana Anders Aya Ben Bea Carla Chen Chloe Dan Dara Dev Eli Elena Emma Eva
Farid Femi Gus Hana Hugo Ida Ines Ivan Jade Jon Kai Kemal Lea Leo Lina Luis Maya Mia Milo Nadia Nia Noah Omar Otto
Pia Priya Quinn Rafa Rosa Sam Sara Tariq Tess Uma Vera Wei Yara Yuki Zoe`.split(/\s+/);

export const LAST_NAMES = `Abara Berg Costa Dubois Eriksen Fischer Garcia Haddad Ito Jensen Kowalski Larsen Moreau Nakamura
Okafor Petrov Quispe Rossi Santos Tanaka Usman Varga Weber Xu Yilmaz Zhou Alvarez Bianchi Cohen Diallo Evans Fontaine
Gupta Horvat Ibrahim Jovanovic Kim Lopez Mendes Novak Olsen Park Reyes Silva Torres Urban Vogel Wang Young Zaman`.split(/\s+/);

export const EMOJI: ReadonlyArray<[string, string]> = [
  ['+1', '1f44d'],
  ['heart', '2764'],
  ['tada', '1f389'],
  ['smile', '1f604'],
  ['thinking', '1f914'],
  ['eyes', '1f440'],
  ['check', '2705'],
  ['rocket', '1f680'],
];

/** Channel names (suffixed when a scale needs more). */
export const TEAM_WORDS = `backend frontend mobile android ios desktop design ux research data analytics ml infra ops sre
security privacy qa testing docs localization support success sales marketing growth partnerships finance billing legal
hr recruiting onboarding platform api integrations search notifications editor calendar payments checkout storage
networking database performance reliability observability release build ci tooling accessibility community events
announcements random social books music games running cycling photography cooking travel pets gardening movies
kitchen office-berlin office-paris office-tokyo office-nyc office-remote interns mentors leads managers architecture
rfc reviews incidents oncall hotfixes migrations compliance audit procurement it helpdesk facilities`.split(/\s+/);
